package openapi

// Test helpers: the documents as served now (built on first use).

func mustV2(d *Docs) *representations {
	v2, err := d.currentV2()
	if err != nil {
		panic(err)
	}
	return v2
}

func mustV3(d *Docs) map[string]*representations {
	v3, _, err := d.currentV3()
	if err != nil {
		panic(err)
	}
	return v3
}

func mustIndex(d *Docs) *representations {
	_, index, err := d.currentV3()
	if err != nil {
		panic(err)
	}
	return index
}

// plainJSON is the document's JSON.
func (r *representations) plainJSON() []byte {
	data, err := r.json.plain()
	if err != nil {
		panic(err)
	}
	return data
}
