package api

import "testing"

func TestGetControllerOf(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	meta := &ObjectMeta{OwnerReferences: []OwnerReference{
		{Kind: "ReplicaSet", Name: "a", UID: "a"},
		{Kind: "ReplicaSet", Name: "b", UID: "b", Controller: &no},
		{Kind: "ReplicaSet", Name: "c", UID: "c", Controller: &yes},
	}}
	if ref := GetControllerOf(meta); ref == nil || ref.UID != "c" || ref != &meta.OwnerReferences[2] {
		t.Fatalf("GetControllerOf = %+v, want the reference to c", ref)
	}
	if !IsControlledBy(meta, "c") || IsControlledBy(meta, "a") || IsControlledBy(meta, "b") {
		t.Fatal("IsControlledBy must answer true for the controller only")
	}
	if GetControllerOf(&ObjectMeta{}) != nil || IsControlledBy(&ObjectMeta{}, "") {
		t.Fatal("no owner references: no controller")
	}
}
