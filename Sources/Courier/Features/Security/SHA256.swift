import Foundation

/// SHA-256 (FIPS 180-4 §6.2) in plain Swift, for certificate-pin hashes on every platform —
/// CryptoKit exists only on Apple platforms and Foundation has no hash on Linux.
///
/// Used on a few hundred bytes per TLS handshake (one SubjectPublicKeyInfo per certificate), so
/// clarity wins over speed. Not constant-time; pins are public values, so that does not matter here.
package struct SHA256: Sendable {
    /// The digest length in bytes.
    static let digestLength = 32

    private var state: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    /// A hasher with nothing fed yet.
    package init() {}

    /// The SHA-256 digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The SHA-256 digest of `data` (whole blocks hashed in place: fast enough for files).
    package static func hash(_ data: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// Feeds `data`; whole 64-byte blocks are compressed straight from its storage, so large
    /// inputs (downloaded files) hash without a per-byte copy.
    package mutating func update(_ data: Data) {
        data.withUnsafeBytes { raw in
            var index = 0
            length &+= UInt64(raw.count)
            if !buffer.isEmpty {
                let take = min(64 - buffer.count, raw.count)
                buffer.append(contentsOf: raw[0..<take])
                index = take
                guard buffer.count == 64 else { return }
                let block = buffer
                compress(block)
                buffer.removeAll(keepingCapacity: true)
            }
            while raw.count - index >= 64 {
                compress(raw, at: index)
                index += 64
            }
            buffer.append(contentsOf: raw[index...])
        }
    }

    /// Feeds more input.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Pads (FIPS 180-4 §5.1.1) and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var padding: [UInt8] = [0x80]
        let afterOne = (buffer.count + 1) % 64
        padding += [UInt8](repeating: 0, count: afterOne <= 56 ? 56 - afterOne : 120 - afterOne)
        for shift in stride(from: 56, through: 0, by: -8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        for byte in padding {
            buffer.append(byte)
            if buffer.count == 64 {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in state {
            digest += [
                UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ]
        }
        return digest
    }

    /// Round constants: the first 32 bits of the fractional parts of the cube roots of the first
    /// 64 primes (FIPS 180-4 §4.2.2).
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    /// One block (FIPS 180-4 §6.2.2).
    private mutating func compress(_ block: [UInt8]) {
        block.withUnsafeBytes { compress($0, at: 0) }
    }

    /// The 64-byte block of `bytes` at `offset` (FIPS 180-4 §6.2.2).
    private mutating func compress(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            compress(bytes, at: offset, schedule: w)
        }
    }

    private mutating func compress(
        _ block: UnsafeRawBufferPointer, at offset: Int, schedule w: UnsafeMutableBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            let i = offset + 4 * t
            w[t] = UInt32(block[i]) << 24 | UInt32(block[i + 1]) << 16 | UInt32(block[i + 2]) << 8 | UInt32(block[i + 3])
        }
        for t in 16..<64 {
            let s0 = Self.rotr(w[t - 15], 7) ^ Self.rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = Self.rotr(w[t - 2], 17) ^ Self.rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        for t in 0..<64 {
            let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ ch &+ Self.k[t] &+ w[t]
            let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            h = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
        state[5] &+= f
        state[6] &+= g
        state[7] &+= h
    }
}
