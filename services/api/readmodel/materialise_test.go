package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaterialise(t *testing.T) {
	const spec = `{"kind":"VirtualMachine","metadata":{"name":"vm","uid":"u1","labels":{"a":"b"}},"spec":{"x":1}}`
	tests := []struct {
		name         string
		spec         string
		slices       []sliceRow
		wantJSON     string
		wantSeq      uint64
		wantReleased []string
	}{
		{
			name:     "no slices: no status",
			spec:     spec,
			wantJSON: `{"kind":"VirtualMachine","metadata":{"labels":{"a":"b"},"name":"vm","resourceVersion":"7.0","uid":"u1"},"spec":{"x":1}}`,
		},
		{
			name: "uid-matching slices merge in service order; others are ignored",
			spec: spec,
			slices: []sliceRow{
				{Service: "power", UID: "u1", Seq: 30, Status: []byte(`{"p":"on","shared":"power"}`)},
				{Service: "crypto", UID: "u0", Seq: 40, Released: true, Status: []byte(`{"stale":true}`)},
				{Service: "placement", UID: "u1", Seq: 20, Released: true, Status: []byte(`{"z":"a","shared":"placement"}`)},
				{Service: "network", UID: "u1", Seq: 10, Released: true},
			},
			wantJSON: `{"kind":"VirtualMachine","metadata":{"labels":{"a":"b"},"name":"vm","resourceVersion":"7.30","uid":"u1"},` +
				`"spec":{"x":1},"status":{"p":"on","shared":"power","z":"a"}}`,
			wantSeq:      30,
			wantReleased: []string{"network", "placement"},
		},
		{
			name:     "a status in the record is the base the slices merge onto",
			spec:     `{"metadata":{"uid":"u1"},"status":{"phase":"Active","z":"old"}}`,
			slices:   []sliceRow{{Service: "placement", UID: "u1", Seq: 3, Status: []byte(`{"z":"new"}`)}},
			wantJSON: `{"metadata":{"resourceVersion":"7.3","uid":"u1"},"status":{"phase":"Active","z":"new"}}`,
			wantSeq:  3,
		},
		{
			name:     "an object without uid gets no slices",
			spec:     `{"metadata":{"name":"n"}}`,
			slices:   []sliceRow{{Service: "power", UID: "", Seq: 3, Status: []byte(`{"z":1}`)}},
			wantJSON: `{"metadata":{"name":"n","resourceVersion":"7.0"}}`,
		},
		{
			name:     "a client-supplied resourceVersion is replaced",
			spec:     `{"metadata":{"uid":"u1","resourceVersion":"999"}}`,
			wantJSON: `{"metadata":{"resourceVersion":"7.0","uid":"u1"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := decodeSpec([]byte(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			got, err := materialise(rec, 7, tt.slices)
			if err != nil {
				t.Fatalf("materialise() error = %v", err)
			}
			if diff := cmp.Diff(tt.wantJSON, string(got.json)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			if got.statusSeq != tt.wantSeq || !cmp.Equal(got.released, tt.wantReleased) {
				t.Errorf("statusSeq %d released %v, want %d %v", got.statusSeq, got.released, tt.wantSeq, tt.wantReleased)
			}
		})
	}
}

func TestDecodeSpecRejects(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"kind":"X"}`, `{"metadata":[]}`, `{"metadata":{"labels":{"a":1}}}`} {
		if _, err := decodeSpec([]byte(body)); err == nil {
			t.Errorf("decodeSpec(%s) error = nil, want one", body)
		}
	}
}

func TestParseRV(t *testing.T) {
	tests := []struct {
		rv      string
		want    position
		wantErr bool
	}{
		{rv: "", want: position{}},
		{rv: "0", want: position{}},
		{rv: "12.7", want: position{12, 7}},
		{rv: "0.0", want: position{}},
		{rv: "12", wantErr: true},
		{rv: "1.2.3", wantErr: true},
		{rv: "-1.2", wantErr: true},
		{rv: "a.b", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseRV(tt.rv)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseRV(%q) = %v, %v; want %v, error %v", tt.rv, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestContinueTokenRoundTrip(t *testing.T) {
	want := continueToken{Namespace: "ns-1", Name: "vm.a", RV: "4.5"}
	got, err := decodeContinue(encodeContinue(want))
	if err != nil || got != want {
		t.Errorf("decodeContinue(encodeContinue(%+v)) = %+v, %v", want, got, err)
	}
}
