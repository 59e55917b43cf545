// CZlib: the system zlib for CourierRealtime's permessage-deflate (RFC 7692) and CourierCurl's
// decoding of streamed gzip and deflate bodies. Apple SDKs ship
// zlib.h and libz; Debian needs zlib1g-dev (installed by scripts/setup when missing).
// deflateInit2 and inflateInit2 are macros (they pass the library version and the struct size),
// which Swift does not import: they are wrapped here as functions.
#ifndef COURIER_CZLIB_SHIM_H
#define COURIER_CZLIB_SHIM_H

#include <zlib.h>

/// Raw deflate (no zlib header, RFC 1951) with a `window_bits` (8-15) LZ77 window: deflateInit2
/// with negative windowBits.
static inline int czlib_deflate_init_raw(z_streamp stream, int level, int window_bits, int memory_level) {
    return deflateInit2(stream, level, Z_DEFLATED, -window_bits, memory_level, Z_DEFAULT_STRATEGY);
}

/// Raw inflate (RFC 1951) with a `window_bits` (8-15) window.
static inline int czlib_inflate_init_raw(z_streamp stream, int window_bits) {
    return inflateInit2(stream, -window_bits);
}

/// Inflate with zlib's own `window_bits` convention: 8-15 zlib-wrapped, -8…-15 raw deflate,
/// +32 for automatic detection of a gzip or zlib wrapper (inflateInit2 as written).
static inline int czlib_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

#endif
