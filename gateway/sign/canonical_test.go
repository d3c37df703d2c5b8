package sign

import (
	"errors"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
		err  error
	}{
		{"sorted keys, no whitespace", `{ "b" : 1 , "a" : [ 1.0 , 2 ] }`, `{"a":[1,2],"b":1}`, nil},
		{"nested objects sorted", `{"z":{"y":1,"x":{"b":true,"a":null}},"a":"s"}`, `{"a":"s","z":{"x":{"a":null,"b":true},"y":1}}`, nil},
		// RFC 8785 section 3.2.2 (numbers, strings, literals).
		{"rfc 8785 primitives",
			`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`, nil},
		// RFC 8785 section 3.2.3 (sorting by UTF-16 code units).
		{"rfc 8785 sorting",
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}", nil},
		{"no HTML escaping", `{"h":"<a href='x'>&</a>"}`, `{"h":"<a href='x'>&</a>"}`, nil},
		{"integers as ES numbers", `{"n":[0,-0,1e2,100.000,9007199254740993]}`, `{"n":[0,0,100,100,9007199254740992]}`, nil},
		{"empty object", `{}`, `{}`, nil},
		{"array", `[1,2]`, "", ErrNotObject},
		{"string", `"x"`, "", ErrNotObject},
		{"number", `5`, "", ErrNotObject},
		{"null", `null`, "", ErrNotObject},
		{"malformed", `{"a":`, "", ErrNotObject},
		{"duplicate key", `{"a":1,"a":2}`, "", ErrNotJCS},
		{"number out of range", `{"a":1e400}`, "", ErrNotJCS},
		{"lone surrogate", `{"a":"\ud800"}`, "", ErrNotJCS},
		{"NUL escape", `{"a":"x\u0000y"}`, "", ErrBadText},
		{"NUL in key", `{"\u0000":1}`, "", ErrBadText},
		{"invalid UTF-8", "{\"a\":\"\xff\xfe\"}", "", ErrBadText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonical([]byte(tt.in))
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("Canonical(%s) = %s, %v\nwant %s, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestCanonicalReserialised shows that re-serialisations of one object
// (key order, whitespace, escapes, number spelling) share one canonical form
// and so one digest, while any change of value does not.
func TestCanonicalReserialised(t *testing.T) {
	t.Parallel()
	forms := []string{
		`{"amount":10,"to":"bob","memo":"café"}`,
		`{"memo":"caf\u00e9","to":"bob","amount":10.0}`,
		"{\n  \"to\": \"bob\",\n  \"amount\": 1e1,\n  \"memo\": \"café\"\n}",
	}
	var digest string
	for _, f := range forms {
		c, err := Canonical([]byte(f))
		if err != nil {
			t.Fatal(err)
		}
		if digest == "" {
			digest = Digest(c)
		} else if Digest(c) != digest {
			t.Fatalf("%s: digest differs", f)
		}
	}
	c, _ := Canonical([]byte(`{"amount":11,"to":"bob","memo":"café"}`))
	if Digest(c) == digest {
		t.Fatal("a changed value kept the digest")
	}
}
