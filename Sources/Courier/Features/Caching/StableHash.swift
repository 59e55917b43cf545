/// FNV-1a hashes: stable across runs and platforms (unlike `Hasher`), for file names and checksums.
package enum StableHash {
    /// 64-bit FNV-1a of `bytes`, starting from `seed` (the standard offset basis by default).
    package static func fnv1a64<Bytes: Sequence>(_ bytes: Bytes, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64
    where Bytes.Element == UInt8 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// 128 bits as 32 lower-case hex digits: two FNV-1a passes with different seeds. Collisions
    /// are astronomically unlikely, and the disk cache verifies the stored key on every read anyway.
    package static func hex128(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let first = fnv1a64(bytes)
        let second = fnv1a64(bytes.reversed(), seed: 0x8422_2325_cbf2_9ce4)
        return hex(first) + hex(second)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
