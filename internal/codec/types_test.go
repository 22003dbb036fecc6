package codec

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Types exercising the corners of attributevalue's behaviour.

type Inner struct {
	A string
	B int `dynamodbav:",omitempty"`
	C *Inner
	D []string `dynamodbav:"d,omitemptyelem"`
}

type Embedded struct {
	E1     string
	E2     int `dynamodbav:"e2"`
	Shadow string
	Deep   string
}

type EmbeddedPtr struct {
	P1     string
	Shadow string
	Deep2  *int
}

type unexportedEmb struct {
	U1 string
	U2 []int
}

type Level string

type MyTime time.Time

type TextKey string

func (k TextKey) MarshalText() ([]byte, error) { return []byte("tk:" + string(k)), nil }

func (k *TextKey) UnmarshalText(b []byte) error {
	s, ok := strings.CutPrefix(string(b), "tk:")
	if !ok {
		return errors.New("bad text key")
	}
	*k = TextKey(s)
	return nil
}

// Marsh has value-receiver (un)marshalers: stored as "x=<X>".
type Marsh struct{ X int }

func (m Marsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if m.X < 0 {
		return nil, nil // falls back to the default encoding
	}
	return &types.AttributeValueMemberS{Value: "x=" + strconv.Itoa(m.X)}, nil
}

func (m *Marsh) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch s := av.(type) {
	case *types.AttributeValueMemberS:
		n, err := strconv.Atoi(strings.TrimPrefix(s.Value, "x="))
		if err != nil {
			return err
		}
		m.X = n
	case *types.AttributeValueMemberNULL:
		m.X = -7
	}
	return nil
}

// PtrMarsh has pointer-receiver (un)marshalers: called only when
// attributevalue sees an addressable value.
type PtrMarsh struct{ Y int }

func (m *PtrMarsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(m.Y * 10)}, nil
}

func (m *PtrMarsh) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		y, err := strconv.Atoi(n.Value)
		if err != nil {
			return err
		}
		m.Y = y / 10
	}
	return nil
}

// ErrMarsh fails to marshal when E is set.
type ErrMarsh struct{ E bool }

func (m ErrMarsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if m.E {
		return nil, errors.New("ErrMarsh failed")
	}
	return &types.AttributeValueMemberBOOL{Value: false}, nil
}

// Item is a typical entity.
type Item struct {
	Username  string    `dynamodbav:"Username"`
	SkillName string    `dynamodbav:"SkillName"`
	Level     string    `dynamodbav:"ProficiencyLevel"`
	Years     int       `dynamodbav:"YearsOfExperience"`
	LastUsed  time.Time `dynamodbav:"LastUsedDate"`
	Score     float64
	Active    bool
	Tags      []string
	Attrs     map[string]string
	Manager   *string
	Count     int64  `dynamodbav:",omitempty"`
	Note      string `dynamodbav:",omitempty"`
}

type Big struct {
	Embedded
	*EmbeddedPtr
	unexportedEmb
	Shadow string `dynamodbav:"Shadow"`

	S   string
	SO  string `dynamodbav:",omitempty"`
	SN  string `dynamodbav:",nullempty"`
	I   int
	I8  int8
	I64 int64 `dynamodbav:"i64,string"`
	U   uint32
	UO  uint `dynamodbav:",omitempty"`
	F   float64
	F32 float32
	FS  float64 `dynamodbav:",string"`
	FO  float64 `dynamodbav:",omitempty"`
	B   bool
	BO  bool `dynamodbav:",omitempty"`
	BN  bool `dynamodbav:",nullempty"`

	T   time.Time
	TU  time.Time `dynamodbav:",unixtime"`
	TP  *time.Time
	TO  time.Time `dynamodbav:",omitempty"`
	TS  time.Time `dynamodbav:",string"`
	MT  MyTime
	MTU MyTime `dynamodbav:",unixtime"`
	UT  attributevalue.UnixTime

	Bytes  []byte
	BytesO []byte `dynamodbav:",omitempty"`
	BytesN []byte `dynamodbav:",nullempty"`

	SL  []string
	SLO []string  `dynamodbav:",omitempty"`
	SLE []string  `dynamodbav:",omitemptyelem"`
	SLN []string  `dynamodbav:",nullemptyelem"`
	SS  []string  `dynamodbav:",stringset"`
	SSE []string  `dynamodbav:",stringset,omitemptyelem"`
	NS  []int     `dynamodbav:",numberset"`
	NSF []float64 `dynamodbav:",numberset"`
	NSS []string  `dynamodbav:",numberset"`
	BS  [][]byte
	BSS [][]byte `dynamodbav:",binaryset"`
	IL  []int
	ILE []int `dynamodbav:",omitemptyelem"`
	ILN []int `dynamodbav:",nullemptyelem"`
	PL  []*int
	LL  [][]string

	M   map[string]string
	MO  map[string]string `dynamodbav:",omitempty"`
	ME  map[string]string `dynamodbav:",omitemptyelem"`
	MN  map[string]string `dynamodbav:",nullemptyelem"`
	MI  map[string]int
	MK  map[int]string
	MU  map[uint8]bool
	MB  map[bool]int
	MF  map[float64]string
	MTK map[TextKey]int
	MLv map[Level]Level
	MA  map[string]any
	MIn map[string]Inner
	MP  map[string]*Inner

	A  any
	AO any `dynamodbav:",omitempty"`
	AL []any
	AS any `dynamodbav:",string"`

	P   *int
	PO  *int `dynamodbav:",omitempty"`
	PN  *int `dynamodbav:",nullempty"`
	PP  **int
	PPO **int `dynamodbav:",omitempty,omitemptyelem"`
	PS  *string
	PB  *[]byte

	In   Inner
	PIn  *Inner
	InL  []Inner
	InPL []*Inner

	Arr  [3]int
	ArrS [2]string `dynamodbav:",stringset"`
	ArrB [4]byte
	Arr0 [0]int

	Lv  Level
	LvL []Level

	Mar  Marsh
	MarP *Marsh
	MarL []Marsh
	PM   PtrMarsh
	PMP  *PtrMarsh
	PML  []PtrMarsh
	PMM  map[string]PtrMarsh
	EM   ErrMarsh

	JN  json.Number
	JNS json.Number `dynamodbav:",string"`
	AN  attributevalue.Number

	Ign string `dynamodbav:"-"`
	//lint:ignore U1000 an unexported field, which the codec must skip
	unexp string

	Ch chan int
	Fn func()
	C  complex128
	UP uintptr

	Nested map[string][]map[string]*Inner
	Any2   map[string][]any
	Ifs    []interface{}
}

// Conflict has two embedded fields of the same name at the same depth
// (both dropped) and a tagged one that wins.
type Conflict struct {
	ConfA
	ConfB
	ConfC
}

type ConfA struct {
	X string
	Y string
}

type ConfB struct {
	X string
	Y string `dynamodbav:"Y"`
}

type ConfC struct {
	Z *Inner
}

// Recursive types.
type Tree struct {
	Name     string
	Children []*Tree
	Parent   *Tree `dynamodbav:",omitempty"`
	Attrs    map[string]Tree
}

// Whole-type delegation: a struct that marshals itself.
type SelfMarsh struct {
	V string
}

func (s SelfMarsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"self": &types.AttributeValueMemberS{Value: s.V},
	}}, nil
}

type unexpPtr struct{ Q string }

// UnexpPtrEmbed reaches Q through an unexported embedded pointer.
type UnexpPtrEmbed struct {
	*unexpPtr
	R string
}

// CaseFold has names that differ only in case and a non-ASCII name.
type CaseFold struct {
	Name   string
	NAMES  string
	Kelvin string `dynamodbav:"\u212Aelvin"`
	Straße string
}

type Small struct {
	A string
	B int
}

// Flat has a field of every shape decodeFast handles (see fastKindOf),
// reached through an embedded struct too, so that its plan is flat.
type Flat struct {
	Small
	S   Level
	B   bool
	I8  int8
	I16 int16
	I32 int32
	I64 int64
	U   uint
	U8  uint8
	U16 uint16
	U32 uint32
	U64 uint64
	F32 float32
	F64 float64
	NS  int32   `dynamodbav:",string"`
	FS  float64 `dynamodbav:",string"`
	T   time.Time
	TU  time.Time `dynamodbav:",unixtime"`
	MT  MyTime
	P   *string
	PL  *Level
	L   []string
	LL  []Level `dynamodbav:",omitempty"`
	M   map[string]string
	ML  map[Level]Level
}

// Recursive without a struct in between.
type RecList []RecList

type RecMap map[string]RecMap

type Recs struct {
	L RecList
	M RecMap
	T Tree
}

// Names has attribute names that are not plain ASCII (one is not valid
// UTF-8), several of which sort before and after each other, and fields of
// every shape the size accounting treats differently: numbers as N and as
// S (the string option), unix times, json.Number texts, sets, pointers,
// NULLs (nullempty), and values delegated whole.
type Names struct {
	Bad     string      `dynamodbav:"\xffbad"`
	Bad2    []string    `dynamodbav:"b\xc3"`
	Accent  string      `dynamodbav:"é"`
	Emoji   int64       `dynamodbav:"😀n"`
	A       string      `dynamodbav:"a,nullempty"`
	Z       string      `dynamodbav:"z,omitempty"`
	NumS    float64     `dynamodbav:",string"`
	IntS    int32       `dynamodbav:",string,omitempty"`
	Unix    time.Time   `dynamodbav:",unixtime"`
	UnixP   *time.Time  `dynamodbav:",unixtime"`
	JSONNum json.Number `dynamodbav:",omitempty"`
	AVNum   attributevalue.Number
	SS      []string          `dynamodbav:",stringset"`
	NS      []float32         `dynamodbav:",numberset"`
	BS      [][]byte          `dynamodbav:",binaryset"`
	Bytes   []byte            `dynamodbav:",nullempty"`
	PS      *string           `dynamodbav:",omitempty"`
	M       map[string]string `dynamodbav:",omitemptyelem"`
	MN      map[string]string `dynamodbav:",nullemptyelem"`
	LN      []string          `dynamodbav:",nullemptyelem"`
	MI      map[string]int    `dynamodbav:",nullemptyelem"`
	L       []any
	Marsh   Marsh
	PMarsh  PtrMarsh
	Lv      Level
	In      *Inner
	T       map[TextKey]string
}

// FastOpts has the shapes encodeFast encodes (see encFastKindOf) under
// every tag option that applies to them, beside shapes and options it must
// leave to the compiled encoders: omitempty with nullempty, sets, number
// strings, Marshalers.
type FastOpts struct {
	S    string
	SO   string `dynamodbav:",omitempty"`
	SN   string `dynamodbav:",nullempty"`
	SON  string `dynamodbav:",omitempty,nullempty"`
	SS   string `dynamodbav:",string,stringset"`
	Lv   Level  `dynamodbav:",omitempty"`
	JN   json.Number
	PMS  PtrMarshStr
	B    bool
	BO   bool `dynamodbav:",omitempty"`
	BN   bool `dynamodbav:",nullempty"`
	I    int  `dynamodbav:",nullempty"`
	I8   int8 `dynamodbav:",omitempty"`
	I16  int16
	I16S int16  `dynamodbav:",string"`
	I32  int32  `dynamodbav:",string,nullempty"`
	I64  int64  `dynamodbav:",omitempty,string"`
	I64U int64  `dynamodbav:",unixtime"`
	U    uint   `dynamodbav:",omitemptyelem,nullemptyelem"`
	U8   uint8  `dynamodbav:",nullempty"`
	U16  uint16 `dynamodbav:",string"`
	U32  uint32 `dynamodbav:",omitempty"`
	U64  uint64 `dynamodbav:",string,omitempty"`
	UON  uint64 `dynamodbav:",omitempty,nullempty"`
	F32  float32
	F32N float32 `dynamodbav:",nullempty"`
	F32S float32 `dynamodbav:",string"`
	F64  float64
	F64O float64 `dynamodbav:",omitempty"`
	F64S float64 `dynamodbav:",string,nullempty"`
	T    time.Time
	TO   time.Time `dynamodbav:",omitempty"`
	TN   time.Time `dynamodbav:",nullempty"`
	TON  time.Time `dynamodbav:",omitempty,nullempty"`
	TU   time.Time `dynamodbav:",unixtime,omitempty"`
	TS   time.Time `dynamodbav:",string"`
	MT   MyTime    `dynamodbav:",unixtime"`
	MTS  MyTime
	P    *string `dynamodbav:",omitempty"`
	PN   *string `dynamodbav:",nullempty"`
	PL   *Level  `dynamodbav:",string"`
	L    []string
	LO   []string `dynamodbav:",omitempty,nullemptyelem"`
	LN   []string `dynamodbav:",nullempty,omitemptyelem"`
	LE   []Level  `dynamodbav:",omitemptyelem,nullemptyelem"`
	LS   []string `dynamodbav:",stringset,omitempty"`
	LNS  []string `dynamodbav:",numberset"`
	A    [2]string
	AN   [3]Level  `dynamodbav:",nullemptyelem"`
	A0   [0]string `dynamodbav:",omitempty"`
	AA   any       // holds a [2]string now and then (not addressable)
	M    map[string]string
	MO   map[string]string `dynamodbav:",omitempty,omitemptyelem"`
	MN   map[string]string `dynamodbav:",nullempty,nullemptyelem"`
	ML   map[Level]Level   `dynamodbav:",nullemptyelem"`
	MTK  map[TextKey]string
}

// FastEnc reaches FastOpts at non-zero offsets: embedded after other
// fields, as a nested struct (an M) and through an embedded pointer (whose
// fields encodeFast does not read).
type FastEnc struct {
	Pad [3]int64
	X   bool
	FastOpts
	In FastOpts
	*EmbeddedPtr
}

// PtrMarshStr is a string with a pointer-receiver Marshaler: called only
// when attributevalue sees an addressable value.
type PtrMarshStr string

func (s *PtrMarshStr) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: "pm:" + string(*s)}, nil
}
