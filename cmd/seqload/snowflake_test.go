package main

import (
	"slices"
	"testing"

	"github.com/seqd/seqd/snowflake"
)

func TestDecodeSnowflakes(t *testing.T) {
	got, err := decodeSnowflakes(nil, []byte(`{"snowflakes":[1,2,3]}`+"\n"), true, 3)
	if err != nil || !slices.Equal(got, []snowflake.ID{1, 2, 3}) {
		t.Errorf("list: %v, %v", got, err)
	}
	got, err = decodeSnowflakes(got, []byte(`{"snowflake":119520048439119879}`), false, 1)
	if err != nil || got[3] != 119520048439119879 {
		t.Errorf("one: %v, %v", got, err)
	}
	for _, body := range []string{`{"snowflakes":[1,2]}`, `{"snowflake":1}`, `{"snowflakes":[1,-2,3]}`, `{"snowflakes":["1","2","3"]}`, `[]`} {
		if _, err := decodeSnowflakes(nil, []byte(body), true, 3); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}
