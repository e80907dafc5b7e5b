#define BAD_VALUE 16w0xZZ
const bit<16> V = BAD_VALUE;
