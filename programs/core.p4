/* <core.p4>: the P4_16 core library, bundled with the NetSparse compiler.
 *
 * Written for this project; the names (packet_in, packet_out, verify,
 * NoAction, the core errors and match kinds) are the ones P4 programmers know
 * from the P4_16 specification, so existing programs read unchanged.
 */
#ifndef _CORE_P4_
#define _CORE_P4_

/* The core errors, in the specification's order: the value of error.X in the
 * pipeline artifact is its position in this list. */
error {
    NoError,               /* no error */
    PacketTooShort,        /* not enough bits left in the packet for an extract */
    NoMatch,               /* no select case matched */
    StackOutOfBounds,      /* access past the end of a header stack */
    HeaderTooShort,        /* a varbit field is longer than the header allows */
    ParserTimeout,         /* the parser ran for too long */
    ParserInvalidArgument  /* an argument of a parser operation was invalid */
}

/* The packet being parsed. A parser reads it through a cursor that starts at
 * the first bit of the packet. */
extern packet_in {
    /* Copy the header's bits from the cursor into `hdr`, make it valid, and
     * move the cursor past it. Too few bits left: error.PacketTooShort. */
    void extract<T>(out T hdr);
    /* The same for a header with a varbit field of the given size (varbit is
     * not supported by this compiler: using it is a diagnostic). */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* The bits at the cursor, as a value of type T, without moving the cursor. */
    T lookahead<T>();
    /* Move the cursor forward by `sizeInBits` bits. */
    void advance(in bit<32> sizeInBits);
    /* The packet's length in bytes. */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Append `hdr` to the packet if it is valid (a struct or stack: each of
     * its headers in order). */
    void emit<T>(in T hdr);
}

/* In a parser: if `check` is false, stop with error `toSignal`. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing: the usual default action of a table. */
@noWarn("unused")
action NoAction() {}

/* The match kinds every target provides. */
match_kind {
    exact,    /* the key equals the entry's value */
    ternary,  /* the key equals the value on the bits set in the mask */
    lpm       /* longest prefix match */
}

#endif /* _CORE_P4_ */
