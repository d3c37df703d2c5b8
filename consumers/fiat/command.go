package fiat

import (
	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
)

// command is one decoded command of a declared type.
type command interface {
	// lock notes on the batch the rows the command reads and locks.
	lock(b *batch)
	// decide applies the command to the batch's locked rows in memory: it
	// changes them, adds the rows it writes, and returns its reply with the
	// events it emits. A business rejection is an outcome with a 4xx
	// status; a rejected command changes nothing.
	decide(b *batch, env schemas.Envelope) pipeline.Outcome
}

// part is the batch state of a command type that keeps rows of its own
// (beyond the shared wallets, limits, deposits, payouts and commerce rows):
// a batch makes it when a command of the type is loaded, queues its reads
// after the shared locks and its writes before the shared ones, in
// declaration order, so every batch takes the locks in the same order.
type part interface {
	queueReads(b *pgx.Batch)
	queueWrites(b *pgx.Batch, bt *batch)
}

// declaration is what the applier knows of a command type.
type declaration struct {
	typ    string
	decode func(schemas.Envelope) (command, error)
	part   func() part // nil for a type that uses the shared rows only
}

type validator interface{ Validate() error }

// declare declares command type typ, applied by the command type T: a
// struct that embeds the command's data type of the schemas, so the data
// decodes into it and its Validate, when it has one, checks it.
func declare[T any, C interface {
	*T
	command
}](typ string) declaration {
	return declaration{typ: typ, decode: func(env schemas.Envelope) (command, error) {
		v, err := schemas.DataAs[T](env)
		if err != nil {
			return nil, err
		}
		c := C(&v)
		if v, ok := any(c).(validator); ok {
			if err := v.Validate(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}}
}

// declareWithPart declares a command type whose commands keep batch state
// of their own, made by newPart.
func declareWithPart[T any, C interface {
	*T
	command
}, P part](typ string, newPart func() P) declaration {
	d := declare[T, C](typ)
	d.part = func() part { return newPart() }
	return d
}

// partOf returns the batch state of command type typ, made on first use.
func partOf[P part](b *batch, typ string) P {
	p, ok := b.parts[typ]
	if !ok {
		p = b.h.decls[b.h.byTyp[typ]].part()
		b.parts[typ] = p
	}
	return p.(P)
}
