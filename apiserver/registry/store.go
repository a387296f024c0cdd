package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/fieldmanager"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// maxUpdateRetries bounds the read-modify-write loop of writes that carry no
// resourceVersion of the caller's (unconditional updates, patches, deletes):
// each retry re-reads the object, so a retry never overwrites a newer write.
const maxUpdateRetries = 16

// generateNameAttempts bounds retries when a generated name collides.
const generateNameAttempts = 8

// Store serves one resource: it turns REST verbs into etcd transactions with
// Kubernetes' semantics, and reads lists and watches from the watch cache.
type Store struct {
	Info     api.ResourceInfo
	GR       apierrors.GroupResource
	GK       apierrors.GroupKind
	strategy Strategy
	storage  *storage.Store
	cache    *cacher.Cacher
	// encodedOnly: the watch cache keeps objects' encodings, not their
	// typed values (cacheDecode).
	encodedOnly bool
	admit       *admission.Chain
	crypt       ValueTransformer
	fields      *fieldmanager.Kind
	guard       WriteGuard
	log         *slog.Logger
	now         func() time.Time
	// typePrefix is how encode's output starts: {"kind":...,"apiVersion":...,
	typePrefix []byte
	// stored, when set, is the kind the resource is kept as in etcd.
	stored *storageVersion
	// keyPrefix starts the resource's etcd keys (below the storage prefix).
	keyPrefix string
	// storageAPIVersion, when set, is the apiVersion objects are written
	// with (a custom resource's storage version).
	storageAPIVersion string
	// generation is how metadata.generation goes for the kind.
	generation generationRule
}

// Config assembles a Store.
type Config struct {
	Info      api.ResourceInfo
	Strategy  Strategy
	Storage   *storage.Store
	Admission *admission.Chain
	// Transformer, if set, encrypts values at rest (--encryption-provider-config).
	Transformer ValueTransformer
	// BookmarkInterval and EventBufferSize tune the watch cache (0: defaults).
	BookmarkInterval time.Duration
	EventBufferSize  int
	// FieldManager, if set, maintains managedFields on every write and
	// serves server-side apply; without it neither is done.
	FieldManager *fieldmanager.Kind
	Logger       *slog.Logger
	// KeyPrefix, if set, replaces the resource's plural as the start of its
	// etcd keys: custom resources live under GROUP/RESOURCE, as in
	// Kubernetes, so they never meet a built-in resource of the same name.
	KeyPrefix string
	// StorageAPIVersion, if set and not the served one, is the apiVersion
	// objects are stored with: a custom resource's storage version, to
	// which every served version converts (only the apiVersion changes,
	// as with the None conversion strategy).
	StorageAPIVersion string
	// Guard, if set, is asked about every create and update of the
	// resource (RBAC's escalation check).
	Guard WriteGuard
}

// WriteGuard refuses writes a user may not make for what the object
// says, whatever her verbs on the resource allow: RBAC's escalation
// check. It is asked after mutating admission and before validation, where
// kube-apiserver's policy-based RBAC storage runs: on create, and on an
// update (PUT, patch, apply) with the object the update would store.
type WriteGuard interface {
	CheckCreate(ctx context.Context, obj api.Object) error
	// CheckUpdate gets the object the update would store and sent, the
	// same object with the metadata the server keeps (uid, creation
	// time, resourceVersion, ...) as the request gave it, which kube's
	// check compares with old.
	CheckUpdate(ctx context.Context, obj, sent, old api.Object) error
}

// NewStore returns the store of one resource. Run must be called to fill
// its watch cache before lists and watches are served.
func NewStore(cfg Config) *Store {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Store{
		Info:       cfg.Info,
		GR:         apierrors.GroupResource{Group: cfg.Info.Group, Resource: cfg.Info.Resource},
		GK:         apierrors.GroupKind{Group: cfg.Info.Group, Kind: cfg.Info.Kind},
		strategy:   cfg.Strategy,
		storage:    cfg.Storage,
		admit:      cfg.Admission,
		crypt:      cfg.Transformer,
		fields:     cfg.FieldManager,
		guard:      cfg.Guard,
		log:        log.With("resource", cfg.Info.Resource),
		now:        time.Now,
		stored:     storageVersionFor(cfg.Info),
		keyPrefix:  cfg.Info.Resource,
		generation: generationRuleFor(cfg.Info),
	}
	if cfg.StorageAPIVersion != cfg.Info.GroupVersion() {
		s.storageAPIVersion = cfg.StorageAPIVersion
	}
	if cfg.KeyPrefix != "" {
		s.keyPrefix = cfg.KeyPrefix
	}
	// What an encoding of the kind starts with, up to its metadata: the
	// type fields in the order the kind's encoding writes them.
	if empty, err := json.Marshal(s.New()); err == nil {
		if i := bytes.Index(empty, []byte(`"metadata"`)); i > 0 {
			s.typePrefix = empty[:i:i]
		}
	}
	if s.typePrefix == nil {
		tm, _ := json.Marshal(api.TypeMeta{Kind: cfg.Info.Kind, APIVersion: cfg.Info.GroupVersion()})
		s.typePrefix = append(tm[:len(tm)-1:len(tm)-1], ',')
	}
	// Pods are the kind a cluster has most of; their cache keeps
	// encodings only (cacheDecode).
	s.encodedOnly = cfg.Info.Group == "" && cfg.Info.Resource == "pods" && s.stored == nil
	var cacheName string
	if s.stored != nil {
		cacheName = cfg.Info.Resource + "." + cfg.Info.Group
	}
	s.cache = cacher.New(cacher.Config{
		Store:            cfg.Storage,
		Prefix:           s.keyPrefix + "/",
		Resource:         cacheName,
		Decode:           s.cacheDecode,
		Bookmark:         s.bookmark,
		EventBufferSize:  cfg.EventBufferSize,
		BookmarkInterval: cfg.BookmarkInterval,
		Logger:           s.log,
	})
	return s
}

// Cacher returns the store's watch cache.
func (s *Store) Cacher() *cacher.Cacher { return s.cache }

// Strategy returns the kind's strategy.
func (s *Store) Strategy() Strategy { return s.strategy }

// Run feeds the watch cache until ctx ends.
func (s *Store) Run(ctx context.Context) error { return s.cache.Run(ctx) }

// key is the etcd key below the storage prefix: RESOURCE/NAMESPACE/NAME or RESOURCE/NAME.
func (s *Store) key(ns, name string) string {
	if s.Info.Namespaced {
		return s.keyPrefix + "/" + ns + "/" + name
	}
	return s.keyPrefix + "/" + name
}

// prefix is the key prefix of a list in ns ("" = all namespaces).
func (s *Store) prefix(ns string) string {
	if s.Info.Namespaced && ns != "" {
		return s.keyPrefix + "/" + ns + "/"
	}
	return s.keyPrefix + "/"
}

// New returns an empty object of the kind with its type set.
func (s *Store) New() api.Object {
	obj := s.Info.New()
	s.setType(obj)
	return obj
}

func (s *Store) setType(obj api.Object) {
	tm := obj.GetTypeMeta()
	tm.Kind, tm.APIVersion = s.Info.Kind, s.Info.GroupVersion()
}

// copyObject returns a deep copy of obj; cached objects are shared and must
// be copied before they are changed.
func (s *Store) copyObject(obj api.Object) api.Object { return api.DeepCopyObject(obj) }

// encryptedPrefix starts values written by an encrypting provider; other
// values are plaintext (written before encryption was turned on, or the
// cache's own re-decoding of an object it holds).
var encryptedPrefix = []byte("k8s:enc:")

// authData is the authenticated data of an encrypted value: its etcd key,
// so a value cannot be moved to another key.
func (s *Store) authData(key string) []byte { return []byte(s.storage.Prefix() + key) }

// decode turns a stored value into an object whose resourceVersion is rev.
func (s *Store) decode(key string, value []byte, rev int64) (api.Object, error) {
	plain, err := s.open(key, value)
	if err != nil {
		return nil, err
	}
	obj, err := s.unmarshal(plain, rev)
	if err != nil {
		return nil, err
	}
	s.normalizeRead(obj)
	return obj, nil
}

// open returns the plaintext of a stored value.
func (s *Store) open(key string, value []byte) ([]byte, error) {
	if s.crypt != nil && bytes.HasPrefix(value, encryptedPrefix) {
		plain, err := s.crypt.TransformFromStorage(value, s.authData(key))
		if err != nil {
			return nil, fmt.Errorf("decrypt %s: %w", key, err)
		}
		return plain, nil
	}
	return value, nil
}

// unmarshal decodes a plaintext value into an object whose resourceVersion is rev.
func (s *Store) unmarshal(plain []byte, rev int64) (api.Object, error) {
	obj := s.Info.New()
	if s.stored != nil {
		obj = s.stored.info.New()
	}
	if err := json.Unmarshal(plain, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", s.Info.Resource, err)
	}
	if s.stored != nil {
		obj = s.stored.fromStorage(obj)
	}
	s.setType(obj)
	obj.GetObjectMeta().ResourceVersion = strconv.FormatInt(rev, 10)
	return obj, nil
}

// asStored is obj as a read of its stored encoding data gives it back,
// when it is stored as another kind (an autoscaling/v1 HPA answers with
// the CPU target its v2 storage defaulted, as kube-apiserver's does);
// obj itself otherwise.
func (s *Store) asStored(obj api.Object, data []byte) api.Object {
	if s.stored == nil {
		return obj
	}
	rv := obj.GetObjectMeta().ResourceVersion
	out, err := s.unmarshal(data, 0)
	if err != nil {
		return obj
	}
	out.GetObjectMeta().ResourceVersion = rv
	return out
}

// normalizeRead gives a stored object what its kind's current schema
// says of it (ReadNormalizer), reporting whether that changed it.
func (s *Store) normalizeRead(obj api.Object) bool {
	n, ok := s.strategy.(ReadNormalizer)
	return ok && n.NormalizeRead(obj)
}

// writeKind is what a write may change of the object it replaces.
type writeKind int

const (
	writeCreate writeKind = iota // a new object, with no status
	writeObject                  // metadata and spec: the status stays
	writeStatus                  // status, labels and annotations: the spec stays
	writeMeta                    // metadata only (a deletion's marks)
)

// writeKindOf is the kind of an update through subresource sub.
func (s *Store) writeKindOf(sub string) writeKind {
	if _, statusLike := s.statusStrategy(sub); statusLike {
		return writeStatus
	}
	return writeObject
}

// encode renders obj for storage: resourceVersion is not stored, it is the
// etcd revision. prev is the stored value obj replaces (nil on create) and
// w what the write may change of it, for kinds stored as another that the
// served one cannot fully say (storageVersion.partial).
func (s *Store) encode(obj api.Object, prev *storage.KV, w writeKind) ([]byte, error) {
	s.setType(obj)
	dropEmptyCollections(obj)
	meta := obj.GetObjectMeta()
	rv := meta.ResourceVersion
	meta.ResourceVersion = ""
	var data []byte
	var err error
	if s.stored != nil {
		st := s.stored.toStorage(obj)
		dropEmptyCollections(st)
		*st.GetTypeMeta() = api.TypeMeta{Kind: s.stored.info.Kind, APIVersion: s.stored.info.GroupVersion()}
		if s.stored.partial {
			err = s.keepStored(st, prev, w)
		}
		if err == nil {
			data, err = json.Marshal(st)
		}
	} else if s.storageAPIVersion != "" {
		tm := obj.GetTypeMeta()
		tm.APIVersion = s.storageAPIVersion
		data, err = json.Marshal(obj)
		s.setType(obj)
	} else {
		data, err = json.Marshal(obj)
	}
	meta.ResourceVersion = rv
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("encode %s: %w", s.Info.Resource, err))
	}
	return data, nil
}

// keepStored applies a write's rules to st, the storage form of the
// written object, with what the write may not change taken from the stored
// object prev replaces (nil on create): a new object has no status, an
// update of the object keeps the stored status and counts a new generation
// when the stored spec changed, an update of the status keeps the stored
// spec, and a deletion's marks keep both. Kubernetes applies these rules to
// its internal object, which holds what the served version only carries in
// annotations a client may rewrite, or drop.
func (s *Store) keepStored(st api.Object, prev *storage.KV, w writeKind) error {
	if prev == nil || w == writeCreate {
		if s.Info.HasSubresource("status") {
			resetStatus(st)
		}
		return nil
	}
	plain, err := s.open(prev.Key, prev.Value)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	old := s.stored.info.New()
	if err := json.Unmarshal(plain, old); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decode %s: %w", s.Info.Resource, err))
	}
	switch w {
	case writeObject:
		if s.Info.HasSubresource("status") {
			copyStatus(st, old)
		}
		gen := old.GetObjectMeta().Generation
		if s.generation.counts() && !specEqual(st, old) {
			gen++
		}
		st.GetObjectMeta().Generation = gen
	case writeStatus:
		copySpec(st, old)
	case writeMeta:
		copySpec(st, old)
		copyStatus(st, old)
	}
	return nil
}

// seal encrypts an encoding for storage under key, when encryption is on.
func (s *Store) seal(key string, plain []byte) ([]byte, error) {
	if s.crypt == nil {
		return plain, nil
	}
	data, err := s.crypt.TransformToStorage(plain, s.authData(key))
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("encrypt %s: %w", s.Info.Resource, err))
	}
	return data, nil
}

// Attrs returns the labels and selectable fields of obj.
func (s *Store) Attrs(obj api.Object) (map[string]string, map[string]string) {
	meta := obj.GetObjectMeta()
	fields := map[string]string{"metadata.name": meta.Name}
	if s.Info.Namespaced {
		fields["metadata.namespace"] = meta.Namespace
	}
	for k, v := range s.strategy.Fields(obj) {
		fields[k] = v
	}
	return meta.Labels, fields
}

// cacheDecode makes the watch cache's object of a stored value
// (decodeItem). A store of many objects (pods) keeps only their encodings:
// its objects' typed values are decoded again when read (Object.Decoded),
// which halves what the cache holds per object; lists served as JSON or
// protobuf never need them.
func (s *Store) cacheDecode(key string, value []byte, rev int64) (*cacher.Object, error) {
	o, err := s.decodeItem(key, value, rev)
	if err != nil || !s.encodedOnly {
		return o, err
	}
	o.Value, o.Decode = nil, s.decodeEncoded
	return o, nil
}

// decodeEncoded is the typed object of a cached object's JSON: the stored
// encoding as read (normalized, with its resourceVersion), of a kind
// stored as served.
func (s *Store) decodeEncoded(data []byte, _ int64) (any, error) {
	obj := s.Info.New()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", s.Info.Resource, err)
	}
	s.setType(obj)
	return obj, nil
}

// decodeItem makes an object of a stored value. Its JSON is the stored
// encoding with the resourceVersion spliced in (what encoding the decoded
// object gives, without encoding it again); values not in encoding/json's
// shape are encoded from the decoded object.
func (s *Store) decodeItem(key string, value []byte, rev int64) (*cacher.Object, error) {
	plain, err := s.open(key, value)
	if err != nil {
		return nil, err
	}
	obj, err := s.unmarshal(plain, rev)
	if err != nil {
		return nil, err
	}
	changed := s.normalizeRead(obj)
	data, ok := []byte(nil), bytes.HasPrefix(plain, s.typePrefix) && !changed
	if ok {
		data, ok = withResourceVersion(plain, rev)
	}
	if !ok {
		if data, err = json.Marshal(obj); err != nil {
			return nil, err
		}
	}
	lbls, flds := s.Attrs(obj)
	meta := obj.GetObjectMeta()
	return &cacher.Object{Key: key, Namespace: meta.Namespace, Name: meta.Name, Rev: rev,
		JSON: data, Labels: lbls, Fields: flds, Value: obj}, nil
}

func (s *Store) bookmark(rev int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"kind": s.Info.Kind, "apiVersion": s.Info.GroupVersion(),
		"metadata": map[string]string{"resourceVersion": strconv.FormatInt(rev, 10)},
	})
	return b
}

// storageError maps a storage failure to the Status a client sees.
func (s *Store) storageError(err error, name string) error {
	var conflict *storage.ConflictError
	var compacted *storage.CompactedError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(s.GR, name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(s.GR, name)
	case errors.As(err, &conflict):
		return apierrors.NewConflict(s.GR, name, errors.New(apierrors.OptimisticLockErrorMsg))
	case errors.As(err, &compacted):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)",
			compacted.Revision, compacted.CompactRevision))
	case errors.Is(err, storage.ErrRequestTooLarge):
		return apierrors.NewRequestEntityTooLarge("limit is the storage backend's request size")
	case errors.Is(err, storage.ErrFutureRevision):
		return apierrors.NewTimeout(fmt.Sprintf("Too large resource version: %v", err), 1)
	case errors.Is(err, storage.ErrUnavailable):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("storage is unavailable: %v", err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeout(fmt.Sprintf("request did not complete in time: %v", err), 1)
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return err
	}
	return apierrors.NewInternalError(err)
}

func (s *Store) invalid(name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(s.GK, name, errs)
}

func (s *Store) attrs(ctx context.Context, op admission.Operation, sub, ns, name string, obj, old api.Object, dryRun bool) *admission.Attributes {
	u, _ := request.UserFrom(ctx)
	a := &admission.Attributes{Operation: op, Resource: s.Info, Subresource: sub, Namespace: ns, Name: name,
		Object: obj, OldObject: old, User: u, DryRun: dryRun}
	if d, ok := s.strategy.(AdmissionDecoder); ok {
		a.Decode = d.DecodeAdmitted
	}
	if s.fields != nil {
		a.TypeConverter = s.fields.TypeConverter()
	}
	return a
}

// AdmitCreate runs the admission chain, mutating then validating, on obj
// created at a subresource the store does not keep (a TokenRequest posted
// to serviceaccounts/NAME/token).
func (s *Store) AdmitCreate(ctx context.Context, sub, ns, name string, obj api.Object, dryRun bool) error {
	a := s.attrs(ctx, admission.Create, sub, ns, name, obj, nil, dryRun)
	if err := s.admit.Admit(ctx, a); err != nil {
		return err
	}
	return s.admit.Validate(ctx, a)
}

// AdmitConnect runs the admission chain, mutating then validating, on a
// CONNECT to subresource sub of ns/name (pods/exec, attach, portforward),
// opts its options object, as kube-apiserver's ConnectResource does before
// it reads the object or connects anywhere. A CONNECT is never a dry run.
func (s *Store) AdmitConnect(ctx context.Context, sub, ns, name string, opts api.Object) error {
	a := s.attrs(ctx, admission.Connect, sub, ns, name, opts, nil, false)
	if err := s.admit.Admit(ctx, a); err != nil {
		return err
	}
	return s.admit.Validate(ctx, a)
}

// Get reads one object from etcd (a quorum read, like Kubernetes' GET without
// resourceVersion).
func (s *Store) Get(ctx context.Context, ns, name string) (api.Object, error) {
	kv, err := s.storage.Get(ctx, s.key(ns, name))
	if err != nil {
		return nil, s.storageError(err, name)
	}
	return s.decode(kv.Key, kv.Value, kv.ModRevision)
}

// WriteOptions are the options of create, update, patch and delete.
type WriteOptions struct {
	DryRun bool
	// Subresource is "", "status", a status-like one of the kind's own
	// (StatusSubresources), or one whose caller builds the result (binding,
	// scale, finalize).
	Subresource string
	// FieldManager is the manager a write is recorded under in
	// managedFields: the request's fieldManager, or its User-Agent's
	// prefix; empty for the apiserver's own writes ("kube-apiserver").
	FieldManager string
	// FieldValidation is the request's fieldValidation: Ignore, Warn (the
	// default, "") or Strict. Patches and applies answer it here; the
	// handler of a create or update checks the body it decodes
	// (CheckBody).
	FieldValidation string
	// AuthorizeCreate, if set, is asked before an apply creates the
	// object: kube-apiserver authorizes a patch that creates as a create.
	AuthorizeCreate func(context.Context) error
	// applied marks a server-side apply, whose result carries its
	// managedFields already.
	applied bool
}

// manager is the name a write is recorded under.
func (o WriteOptions) manager() string {
	if o.FieldManager == "" {
		return "kube-apiserver"
	}
	return o.FieldManager
}

// trackFields records in obj's managedFields what the write changes from
// cur (nil: a create). Applies have done so already; a binding only sets
// the node, as in Kubernetes, where it bypasses the field manager.
func (s *Store) trackFields(cur, obj api.Object, opts WriteOptions) {
	if s.fields == nil || opts.applied || opts.Subresource == "binding" {
		return
	}
	s.fields.Update(cur, obj, opts.manager(), opts.Subresource)
}

// Create stores a new object in namespace ns.
func (s *Store) Create(ctx context.Context, ns string, obj api.Object, opts WriteOptions) (api.Object, error) {
	out, _, err := s.CreateEncoded(ctx, ns, obj, opts)
	return out, err
}

// CreateEncoded is Create that also returns the created object's JSON (as
// json.Marshal gives it), made from its storage encoding, or nil when it has
// none (a dry run): a response need not encode the object again.
func (s *Store) CreateEncoded(ctx context.Context, ns string, obj api.Object, opts WriteOptions) (api.Object, []byte, error) {
	s.setType(obj)
	meta := obj.GetObjectMeta()
	if err := s.checkNamespace(meta, ns); err != nil {
		return nil, nil, err
	}
	generated := meta.Name == "" && meta.GenerateName != ""
	if generated {
		meta.Name = generateName(meta.GenerateName)
	}
	meta.UID = api.UID(uuid.NewString())
	meta.CreationTimestamp = api.NewTime(s.now())
	meta.Generation = s.generation.atCreate()
	meta.ResourceVersion = ""
	meta.DeletionTimestamp = nil
	meta.DeletionGracePeriodSeconds = nil
	s.strategy.DefaultCreate(obj)
	s.trackFields(nil, obj, opts)
	a := s.attrs(ctx, admission.Create, "", meta.Namespace, meta.Name, obj, nil, opts.DryRun)
	if err := s.admit.Admit(ctx, a); err != nil {
		return nil, nil, err
	}
	// As kube's BeforeCreate, after mutating admission: the strategy
	// prepares what webhooks, policies and LimitRanger left (a pod's QoS
	// class counts the resources they added; a status they set is reset).
	s.strategy.PrepareForCreate(ctx, obj)
	// kube reads what it stored back through its defaults: status fields
	// the defaults fill survive the reset.
	defaults.Default(obj)
	if s.guard != nil {
		if err := s.guard.CheckCreate(ctx, obj); err != nil {
			return nil, nil, err
		}
	}
	if errs := s.strategy.Validate(ctx, obj); len(errs) > 0 {
		return nil, nil, s.invalid(meta.Name, errs)
	}
	if err := s.admit.Validate(ctx, a); err != nil {
		return nil, nil, err
	}
	if al, ok := s.strategy.(AllocatingStrategy); ok {
		rollback, err := al.AllocateCreate(ctx, obj, opts.DryRun)
		if err != nil {
			return nil, nil, err
		}
		out, data, err := s.create(ctx, obj, generated, opts)
		if err != nil {
			rollback()
		}
		return out, data, err
	}
	return s.create(ctx, obj, generated, opts)
}

// create stores a new, admitted and validated object; it also returns the
// object's JSON, see CreateEncoded.
func (s *Store) create(ctx context.Context, obj api.Object, generated bool, opts WriteOptions) (api.Object, []byte, error) {
	meta := obj.GetObjectMeta()
	for attempt := 0; ; attempt++ {
		data, err := s.encode(obj, nil, writeCreate)
		if err != nil {
			return nil, nil, err
		}
		if opts.DryRun {
			return s.asStored(obj, data), nil, nil
		}
		key := s.key(meta.Namespace, meta.Name)
		sealed, err := s.seal(key, data)
		if err != nil {
			return nil, nil, err
		}
		rev, err := s.storage.Create(ctx, key, sealed)
		if errors.Is(err, storage.ErrKeyExists) && generated && attempt < generateNameAttempts {
			meta.Name = generateName(meta.GenerateName)
			continue
		}
		if err != nil {
			return nil, nil, s.storageError(err, meta.Name)
		}
		meta.ResourceVersion = strconv.FormatInt(rev, 10)
		if s.storageAPIVersion != "" || s.stored != nil {
			return s.asStored(obj, data), nil, nil // stored as another version or kind than served
		}
		out, _ := withResourceVersion(data, rev)
		return obj, out, nil
	}
}

// checkNamespace makes the object's namespace agree with the URL's.
func (s *Store) checkNamespace(meta *api.ObjectMeta, ns string) error {
	if !s.Info.Namespaced {
		meta.Namespace = ""
		return nil
	}
	if meta.Namespace == "" {
		meta.Namespace = ns
	} else if ns != "" && meta.Namespace != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// generateName appends five random characters from Kubernetes' alphabet.
func generateName(base string) string { return naming.GenerateName(base) }

// Mutation computes the desired object from a private copy of the current one.
type Mutation func(cur api.Object) (api.Object, error)

// Update replaces an object (PUT). A non-empty resourceVersion in obj is a
// precondition: a mismatch is a 409 Conflict, never retried. created reports
// a create through PUT on kinds that allow it.
func (s *Store) Update(ctx context.Context, ns, name string, obj api.Object, opts WriteOptions) (api.Object, bool, error) {
	meta := obj.GetObjectMeta()
	if meta.Name != name {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, name))
	}
	if err := s.checkNamespace(meta, ns); err != nil {
		return nil, false, err
	}
	userRV := meta.ResourceVersion
	if userRV == "" && !s.strategy.AllowUnconditionalUpdate() {
		return nil, false, s.invalid(name, field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"),
			meta.ResourceVersion, "must be specified for an update")})
	}
	out, err := s.write(ctx, meta.Namespace, name, userRV, opts, func(cur api.Object) (api.Object, error) {
		return s.copyObject(obj), nil
	})
	if apierrors.IsNotFound(err) && opts.Subresource == "" && s.strategy.AllowCreateOnUpdate() {
		created, err := s.Create(ctx, ns, obj, opts)
		return created, err == nil, err
	}
	return out, false, err
}

// Mutate applies mutate to the current object and stores the result with
// the same rules as Update; userRV, if set, must match the current object.
// Subresource handlers (binding, scale, finalize) are built on it.
func (s *Store) Mutate(ctx context.Context, ns, name, userRV string, opts WriteOptions, mutate Mutation) (api.Object, error) {
	return s.write(ctx, ns, name, userRV, opts, mutate)
}

var errRetry = errors.New("retry")

// write is the read-modify-write loop behind every update.
func (s *Store) write(ctx context.Context, ns, name, userRV string, opts WriteOptions, mutate Mutation) (api.Object, error) {
	key := s.key(ns, name)
	for attempt := 0; attempt < maxUpdateRetries; attempt++ {
		kv, err := s.storage.Get(ctx, key)
		if err != nil {
			return nil, s.storageError(err, name)
		}
		cur, err := s.decode(kv.Key, kv.Value, kv.ModRevision)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if userRV != "" && userRV != cur.GetObjectMeta().ResourceVersion {
			return nil, apierrors.NewConflict(s.GR, name, errors.New(apierrors.OptimisticLockErrorMsg))
		}
		out, err := s.writeOnce(ctx, kv, cur, userRV, opts, mutate)
		if errors.Is(err, errRetry) {
			continue
		}
		return out, err
	}
	return nil, apierrors.NewConflict(s.GR, name, fmt.Errorf("too many concurrent writers, gave up after %d attempts", maxUpdateRetries))
}

func (s *Store) writeOnce(ctx context.Context, kv storage.KV, cur api.Object, userRV string, opts WriteOptions, mutate Mutation) (api.Object, error) {
	obj, err := mutate(s.copyObject(cur))
	if err != nil {
		return nil, err
	}
	s.setType(obj)
	curMeta, meta := cur.GetObjectMeta(), obj.GetObjectMeta()
	name := curMeta.Name
	var sentMeta api.ObjectMeta
	if s.guard != nil {
		sentMeta = *meta
	}
	if meta.UID != "" && meta.UID != curMeta.UID {
		return nil, apierrors.NewConflict(s.GR, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", meta.UID, curMeta.UID))
	}
	var errs field.ErrorList
	// Kind-specific subresources (binding, scale, finalize) build their
	// result from the current object themselves and validate their input.
	status, statusLike := s.statusStrategy(opts.Subresource)
	internal := opts.Subresource != "" && !statusLike
	switch {
	case statusLike:
		applied := meta.ManagedFields
		obj = s.statusUpdate(obj, cur)
		meta = obj.GetObjectMeta()
		if opts.applied {
			meta.ManagedFields = applied
		}
	case !internal:
		s.strategy.DefaultUpdate(obj, cur)
		if hasStatus(obj) && s.Info.HasSubresource("status") {
			copyStatus(obj, cur)
		}
	}
	// Fields the server owns.
	meta.Name, meta.Namespace = curMeta.Name, curMeta.Namespace
	meta.UID = curMeta.UID
	meta.CreationTimestamp = curMeta.CreationTimestamp
	meta.DeletionTimestamp = curMeta.DeletionTimestamp
	meta.DeletionGracePeriodSeconds = curMeta.DeletionGracePeriodSeconds
	meta.GenerateName = curMeta.GenerateName
	meta.Generation = curMeta.Generation
	meta.ResourceVersion = curMeta.ResourceVersion
	s.trackFields(cur, obj, opts)
	if statusLike {
		status.PrepareForStatusUpdate(ctx, obj, cur)
	}
	a := s.attrs(ctx, admission.Update, opts.Subresource, curMeta.Namespace, name, obj, cur, opts.DryRun)
	if err := s.admit.Admit(ctx, a); err != nil {
		return nil, err
	}
	// As kube's BeforeUpdate, after mutating admission: a spec change a
	// webhook or policy undid is no new generation. A binding sets
	// spec.nodeName without one, as kube's BindingREST writes the pod
	// without its update strategy. The spec is compared as it would be
	// stored (an empty list is none), the object itself left as written
	// for validation and the validating webhooks.
	if s.generation.counts() && !specEqual(asStoredCollections(obj), cur) && opts.Subresource != "binding" {
		meta.Generation++
	}
	if opts.Subresource == "" {
		s.strategy.PrepareForUpdate(ctx, obj, cur)
	}
	if s.guard != nil && !internal && !statusLike {
		sent := api.DeepCopyObject(obj)
		sm := sent.GetObjectMeta()
		sm.UID, sm.CreationTimestamp, sm.ResourceVersion, sm.Generation = sentMeta.UID, sentMeta.CreationTimestamp, sentMeta.ResourceVersion, sentMeta.Generation
		sm.DeletionTimestamp, sm.DeletionGracePeriodSeconds, sm.GenerateName = sentMeta.DeletionTimestamp, sentMeta.DeletionGracePeriodSeconds, sentMeta.GenerateName
		if err := s.guard.CheckUpdate(ctx, obj, sent, cur); err != nil {
			return nil, err
		}
	}
	if curMeta.DeletionTimestamp != nil {
		errs = append(errs, newFinalizersForbidden(meta.Finalizers, curMeta.Finalizers)...)
	}
	switch {
	case statusLike:
		errs = append(errs, status.ValidateStatusUpdate(ctx, obj, cur)...)
	case !internal:
		errs = append(errs, s.strategy.ValidateUpdate(ctx, obj, cur)...)
	}
	if len(errs) > 0 {
		return nil, s.invalid(name, errs)
	}
	if err := s.admit.Validate(ctx, a); err != nil {
		return nil, err
	}
	if al, ok := s.strategy.(AllocatingStrategy); ok && opts.Subresource == "" {
		rollback, commit, err := al.AllocateUpdate(ctx, obj, cur, opts.DryRun)
		if err != nil {
			return nil, err
		}
		out, err := s.store(ctx, kv, cur, obj, userRV, opts)
		if err != nil || out == cur {
			rollback()
			return out, err
		}
		commit()
		if out.GetObjectMeta().DeletionTimestamp != nil && s.deleteDuringUpdate(out) && !opts.DryRun {
			al.Release(ctx, out)
		}
		return out, nil
	}
	return s.store(ctx, kv, cur, obj, userRV, opts)
}

// store writes obj over cur (at kv), unless nothing changed.
func (s *Store) store(ctx context.Context, kv storage.KV, cur, obj api.Object, userRV string, opts WriteOptions) (api.Object, error) {
	meta := obj.GetObjectMeta()
	name := meta.Name
	data, err := s.encode(obj, &kv, s.writeKindOf(opts.Subresource))
	if err != nil {
		return nil, err
	}
	if s.unchanged(data, kv) {
		// Nothing changed: no write, no event, same resourceVersion.
		return cur, nil
	}
	if opts.DryRun {
		return s.asStored(obj, data), nil
	}
	sealed, err := s.seal(kv.Key, data)
	if err != nil {
		return nil, err
	}
	rev, err := s.storage.Update(ctx, kv.Key, sealed, kv.ModRevision)
	var conflict *storage.ConflictError
	if errors.As(err, &conflict) && userRV == "" {
		return nil, errRetry
	}
	if err != nil {
		return nil, s.storageError(err, name)
	}
	meta.ResourceVersion = strconv.FormatInt(rev, 10)
	obj = s.asStored(obj, data)
	meta = obj.GetObjectMeta()
	if s.deleteDuringUpdate(obj) {
		// The last finalizer of an object being deleted is gone: finish the deletion.
		_, drev, err := s.storage.Delete(ctx, kv.Key, rev)
		if err == nil {
			meta.ResourceVersion = strconv.FormatInt(drev, 10)
		} else if !errors.Is(err, storage.ErrNotFound) {
			var c *storage.ConflictError
			if !errors.As(err, &c) {
				return nil, s.storageError(err, name)
			}
		}
	}
	return obj, nil
}

// statusStrategy returns the rules of a status-like subresource: /status,
// or one of the kind's own (StatusSubresources, a CSR's /approval). Other
// subresources are not status-like.
func (s *Store) statusStrategy(sub string) (StatusStrategy, bool) {
	if own, ok := s.strategy.(StatusSubresources); ok {
		if ss, ok := own.StatusSubresource(sub); ok {
			return ss, true
		}
	}
	if sub != "status" {
		return nil, false
	}
	if ss, ok := s.strategy.(StatusStrategy); ok {
		return ss, true
	}
	return updateRules{s.strategy}, true
}

// updateRules are the status rules of a kind without its own: nothing to
// prepare, and the rules of an update.
type updateRules struct{ Strategy }

func (updateRules) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {}

func (u updateRules) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return u.ValidateUpdate(ctx, obj, old)
}

// statusUpdate keeps everything of cur but the status of obj (and, like
// Kubernetes, the labels and annotations a status writer may also touch).
// The subresource's rules (PrepareForStatusUpdate) prepare the result
// after the field manager recorded the write, as in kube, where the
// strategy runs after the handler's field manager: a field the rules drop
// stays owned by its writer.
func (s *Store) statusUpdate(obj, cur api.Object) api.Object {
	out := s.copyObject(cur)
	copyStatus(out, obj)
	om, nm := out.GetObjectMeta(), obj.GetObjectMeta()
	om.Labels, om.Annotations = nm.Labels, nm.Annotations
	return out
}

// deleteDuringUpdate reports whether an update finished a pending deletion:
// no finalizers are left and no grace period is running.
func (s *Store) deleteDuringUpdate(obj api.Object) bool {
	m := obj.GetObjectMeta()
	if blocker, ok := s.strategy.(deletionBlocker); ok && blocker.pendingDeletion(obj) {
		// A Terminating namespace waits for spec.finalizers too: a status
		// write must not finish its deletion.
		return false
	}
	return m.DeletionTimestamp != nil && len(m.Finalizers) == 0 &&
		m.DeletionGracePeriodSeconds != nil && *m.DeletionGracePeriodSeconds == 0
}

func newFinalizersForbidden(now, before []string) field.ErrorList {
	had := map[string]bool{}
	for _, f := range before {
		had[f] = true
	}
	for _, f := range now {
		if !had[f] {
			return field.ErrorList{field.Forbidden(field.NewPath("metadata", "finalizers"),
				"no new finalizers can be added if the object is being deleted, found new finalizers []string{\""+f+"\"}")}
		}
	}
	return nil
}

// Delete deletes an object, or marks it for deletion when a grace period
// runs or finalizers remain. deleted reports whether it is gone from storage.
func (s *Store) Delete(ctx context.Context, ns, name string, opts *api.DeleteOptions, dryRun bool) (api.Object, bool, error) {
	if opts == nil {
		opts = &api.DeleteOptions{}
	}
	key := s.key(ns, name)
	for attempt := 0; attempt < maxUpdateRetries; attempt++ {
		kv, err := s.storage.Get(ctx, key)
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		cur, err := s.decode(kv.Key, kv.Value, kv.ModRevision)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		out, deleted, err := s.deleteOnce(ctx, kv, cur, opts, dryRun)
		if errors.Is(err, errRetry) {
			continue
		}
		return out, deleted, err
	}
	return nil, false, apierrors.NewConflict(s.GR, name, fmt.Errorf("too many concurrent writers, gave up after %d attempts", maxUpdateRetries))
}

func (s *Store) deleteOnce(ctx context.Context, kv storage.KV, cur api.Object, opts *api.DeleteOptions, dryRun bool) (api.Object, bool, error) {
	meta := cur.GetObjectMeta()
	name := meta.Name
	userPrecondition := false
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != meta.UID {
			return nil, false, apierrors.NewConflict(s.GR, name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, meta.UID))
		}
		if p.ResourceVersion != nil {
			userPrecondition = true
			if *p.ResourceVersion != meta.ResourceVersion {
				return nil, false, apierrors.NewConflict(s.GR, name,
					fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, meta.ResourceVersion))
			}
		}
	}
	if opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds < 0 {
		return nil, false, s.invalid(name, field.ErrorList{field.Invalid(field.NewPath("gracePeriodSeconds"), *opts.GracePeriodSeconds, "must be >= 0")})
	}
	a := s.attrs(ctx, admission.Delete, "", meta.Namespace, name, nil, cur, dryRun)
	// Mutating admission sees deletes too (a webhook may refuse one, not change it).
	if err := s.admit.Admit(ctx, a); err != nil {
		return nil, false, err
	}
	if err := s.admit.Validate(ctx, a); err != nil {
		return nil, false, err
	}

	if p, ok := s.strategy.(DeletionPreparer); ok && meta.DeletionTimestamp == nil {
		// The kind's own finalizers and conditions of a deletion, on a
		// copy: cur is the stored object until the write.
		cur = s.copyObject(cur)
		p.PrepareForDelete(cur)
		meta = cur.GetObjectMeta()
	}
	grace, graceful := int64(0), false
	if g, ok := s.strategy.(GracefulStrategy); ok {
		grace, graceful = g.GracePeriod(cur, opts)
		if grace <= 0 {
			graceful, grace = false, 0
		}
	}
	finalizers := withPropagationFinalizers(meta.Finalizers, opts)
	blocker, _ := s.strategy.(deletionBlocker)
	blocked := blocker != nil && blocker.pendingDeletion(cur)

	if meta.DeletionTimestamp != nil || graceful || len(finalizers) > 0 || blocked {
		// Mark for deletion instead of deleting, unless an ongoing deletion
		// has reached zero grace and no finalizers remain.
		next := s.copyObject(cur)
		nm := next.GetObjectMeta()
		nm.Finalizers = finalizers
		now := s.now()
		if meta.DeletionTimestamp == nil {
			ts := api.NewTime(now.Add(time.Duration(grace) * time.Second))
			nm.DeletionTimestamp = &ts
			nm.DeletionGracePeriodSeconds = &grace
			// Controllers must not act on an object being deleted as they
			// did: kube-apiserver's generic store counts the mark as a new
			// generation (kinds with a deletion of their own, CRDs and
			// namespaces, do not).
			if _, own := s.strategy.(DeletionPreparer); !own && blocker == nil && nm.Generation > 0 {
				nm.Generation++
			}
		} else {
			curGrace := int64(0)
			if meta.DeletionGracePeriodSeconds != nil {
				curGrace = *meta.DeletionGracePeriodSeconds
			}
			if grace < curGrace {
				ts := api.NewTime(now.Add(time.Duration(grace) * time.Second))
				if ts.Before(meta.DeletionTimestamp.Time) {
					nm.DeletionTimestamp = &ts
				}
				nm.DeletionGracePeriodSeconds = &grace
			}
		}
		if nm.DeletionGracePeriodSeconds != nil && *nm.DeletionGracePeriodSeconds == 0 && len(finalizers) == 0 && !blocked {
			return s.deleteNow(ctx, kv, cur, userPrecondition, dryRun)
		}
		if blocked {
			blocker.markDeleting(next)
		}
		data, err := s.encode(next, &kv, writeMeta)
		if err != nil {
			return nil, false, err
		}
		if s.unchanged(data, kv) || dryRun {
			return next, false, nil
		}
		sealed, err := s.seal(kv.Key, data)
		if err != nil {
			return nil, false, err
		}
		rev, err := s.storage.Update(ctx, kv.Key, sealed, kv.ModRevision)
		var conflict *storage.ConflictError
		if errors.As(err, &conflict) && !userPrecondition {
			return nil, false, errRetry
		}
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		nm.ResourceVersion = strconv.FormatInt(rev, 10)
		return next, false, nil
	}
	return s.deleteNow(ctx, kv, cur, userPrecondition, dryRun)
}

func (s *Store) deleteNow(ctx context.Context, kv storage.KV, cur api.Object, userPrecondition, dryRun bool) (api.Object, bool, error) {
	if dryRun {
		return cur, true, nil
	}
	_, rev, err := s.storage.Delete(ctx, kv.Key, kv.ModRevision)
	var conflict *storage.ConflictError
	if errors.As(err, &conflict) && !userPrecondition {
		return nil, false, errRetry
	}
	if err != nil {
		return nil, false, s.storageError(err, cur.GetObjectMeta().Name)
	}
	if al, ok := s.strategy.(AllocatingStrategy); ok {
		al.Release(ctx, cur)
	}
	cur.GetObjectMeta().ResourceVersion = strconv.FormatInt(rev, 10)
	return cur, true, nil
}

// withPropagationFinalizers adds the garbage collector's finalizer for the
// requested propagation policy: orphan, or foregroundDeletion.
func withPropagationFinalizers(existing []string, opts *api.DeleteOptions) []string {
	out := append([]string(nil), existing...)
	policy := api.DeletionPropagation("")
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil {
		if *opts.OrphanDependents {
			policy = api.DeletePropagationOrphan
		} else {
			policy = api.DeletePropagationBackground
		}
	}
	add := ""
	switch policy {
	case api.DeletePropagationOrphan:
		add = api.FinalizerOrphanDependents
	case api.DeletePropagationForeground:
		add = api.FinalizerDeleteDependents
	}
	if add == "" {
		return out
	}
	for _, f := range out {
		if f == add {
			return out
		}
	}
	return append(out, add)
}

// ReturnsDeletedObject reports whether DELETE answers with the object.
func (s *Store) ReturnsDeletedObject() bool {
	r, ok := s.strategy.(DeletedObjectReturner)
	return ok && r.ReturnDeletedObject()
}

// FieldLabels returns the field selector labels the kind supports.
func (s *Store) FieldLabels() map[string]bool {
	_, flds := s.Attrs(s.New())
	out := make(map[string]bool, len(flds)+1)
	for k := range flds {
		out[k] = true
	}
	out["metadata.namespace"] = true
	return out
}

// unchanged reports whether a new plaintext encoding is what kv stores;
// encrypted values differ on every write (fresh IVs), so they are compared
// as plaintext.
func (s *Store) unchanged(plain []byte, kv storage.KV) bool {
	stored := kv.Value
	if s.crypt != nil && bytes.HasPrefix(stored, encryptedPrefix) {
		var err error
		if stored, err = s.crypt.TransformFromStorage(stored, s.authData(kv.Key)); err != nil {
			return false
		}
	}
	return bytes.Equal(plain, stored)
}

// Key returns the storage (and watch cache) key of ns/name.
func (s *Store) Key(ns, name string) string { return s.key(ns, name) }
