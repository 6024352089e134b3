// bustail prints the value changes of Synoptic channels from the NATS bus and
// flags gaps: a Go consumer of the bus contract (docs/bus.md, docs/asyncapi.yaml).
//
//	bustail [-n COUNT] [SUBJECT]     (default subject cs.val.>; NATS URL from $SYNOPTIC_NATS_URL)
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
)

// Value is the payload of cs.val.<tail> (value.schema.json).
type Value struct {
	Ver int    `msgpack:"ver"`
	V   any    `msgpack:"v"`   // number, string, bool, []any, *TypedArray or nil
	T   int64  `msgpack:"t"`   // source timestamp, ns since the Unix epoch
	Sev int    `msgpack:"sev"` // 0 none, 1 minor, 2 major, 3 invalid
	St  string `msgpack:"st"`  // status text
	Seq uint64 `msgpack:"seq"` // per-channel sequence number within Ep
	Ep  int64  `msgpack:"ep"`  // the publishing adapter's start epoch
	C   bool   `msgpack:"c"`   // source connected
}

// TypedArray is msgpack ext type 1: u8 dtype code, u8 ndim, ndim x u32 dims,
// then the raw little-endian elements.
type TypedArray struct {
	DType byte
	Shape []uint32
	Data  []byte
}

// UnmarshalMsgpack reads the ext type's data (the elements are not copied).
func (a *TypedArray) UnmarshalMsgpack(b []byte) error {
	if len(b) < 2 || len(b) < 2+4*int(b[1]) {
		return fmt.Errorf("typed array: %d bytes is too short", len(b))
	}
	a.DType, a.Shape = b[0], make([]uint32, b[1])
	for i := range a.Shape {
		a.Shape[i] = binary.LittleEndian.Uint32(b[2+4*i:])
	}
	a.Data = b[2+4*len(a.Shape):]
	return nil
}

// MarshalMsgpack writes the ext type's data.
func (a *TypedArray) MarshalMsgpack() ([]byte, error) {
	out := []byte{a.DType, byte(len(a.Shape))}
	for _, d := range a.Shape {
		out = binary.LittleEndian.AppendUint32(out, d)
	}
	return append(out, a.Data...), nil
}

func init() { msgpack.RegisterExt(1, (*TypedArray)(nil)) }

type position struct {
	ep  int64
	seq uint64
}

func main() {
	count := flag.Int("n", 0, "exit after this many messages (0: never)")
	flag.Parse()
	subject := "cs.val.>"
	if flag.NArg() > 0 {
		subject = flag.Arg(0)
	}
	url := os.Getenv("SYNOPTIC_NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url, nats.Name("bustail"))
	if err != nil {
		log.Fatalf("connect %s: %v", url, err)
	}
	defer nc.Close()
	msgs := make(chan *nats.Msg, 4096)
	if _, err := nc.ChanSubscribe(subject, msgs); err != nil {
		log.Fatalf("subscribe %s: %v", subject, err)
	}
	if err := nc.Flush(); err != nil { // the subscription is live from here
		log.Fatal(err)
	}
	fmt.Println("subscribed", subject)
	last := map[string]position{}
	for n := 0; *count == 0 || n < *count; n++ {
		msg := <-msgs
		var v Value
		if err := msgpack.Unmarshal(msg.Data, &v); err != nil {
			log.Printf("%s: undecodable payload: %v", msg.Subject, err)
			continue
		}
		if v.Ver != 1 {
			log.Printf("%s: schema major version %d is not supported", msg.Subject, v.Ver)
			continue
		}
		state := "ok"
		if prev, seen := last[msg.Subject]; seen && prev.ep == v.Ep && v.Seq != prev.seq+1 {
			state = "gap"
		}
		last[msg.Subject] = position{v.Ep, v.Seq}
		if !v.C {
			state = "disconnected: " + v.St
		}
		fmt.Printf("%s %s sev %d %s\n", msg.Subject, show(v.V), v.Sev, state)
	}
}

func show(v any) string {
	if a, ok := v.(*TypedArray); ok {
		return fmt.Sprintf("array(dtype %d, shape %v, %d bytes)", a.DType, a.Shape, len(a.Data))
	}
	return fmt.Sprint(v)
}
