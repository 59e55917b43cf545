import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UUID {
    /// A version 4 (random) UUID (RFC 9562 §5.4) from the system's cryptographic random source.
    ///
    /// Same format as `UUID()`, but cheaper where it matters: on Linux `UUID()` opens and reads
    /// `/dev/urandom` on every call, which was ~5 % of Courier's per-request CPU. On Linux the
    /// bytes come from `RandomBytePool` (one read of `/dev/urandom` per 256 UUIDs); on Apple
    /// platforms from `SystemRandomNumberGenerator` (`arc4random`, no system call).
    package static func random() -> UUID {
        #if canImport(Glibc) || canImport(Musl)
        let (high, low) = RandomBytePool.shared.next()
        #else
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        #endif
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3),
                byte(high, 4), byte(high, 5), (byte(high, 6) & 0x0F) | 0x40, byte(high, 7),
                (byte(low, 0) & 0x3F) | 0x80, byte(low, 1), byte(low, 2), byte(low, 3),
                byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }
}

#if canImport(Glibc) || canImport(Musl)
/// 4 KiB of the kernel's cryptographic random bytes handed out 16 bytes at a time:
/// `SystemRandomNumberGenerator` makes one `getrandom` system call per 8 bytes on Linux; this
/// makes three (open, read, close) per 256 UUIDs. Each byte is handed out once.
final class RandomBytePool: @unchecked Sendable {
    // @unchecked: `words` and `position` are only touched with `lock` held.
    static let shared = RandomBytePool()

    private let lock = NSLock()
    private var words = [UInt64](repeating: 0, count: 512)
    private var position = 512

    /// Two random 64-bit words.
    func next() -> (UInt64, UInt64) {
        lock.lock()
        defer { lock.unlock() }
        if position + 2 > words.count {
            refill()
            position = 0
        }
        defer { position += 2 }
        return (words[position], words[position + 1])
    }

    private func refill() {
        let filled = words.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            // /dev/urandom is the kernel's cryptographic source (the one getrandom(2) reads);
            // opened per refill, so no descriptor stays open.
            let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var offset = 0
            for _ in 0..<64 where offset < buffer.count {
                let count = read(descriptor, base + offset, buffer.count - offset)
                if count > 0 {
                    offset += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return offset == buffer.count
        }
        if !filled {
            // /dev/urandom cannot be read (e.g. a sandbox without /dev): the standard library's source.
            var generator = SystemRandomNumberGenerator()
            for index in words.indices { words[index] = generator.next() }
        }
    }
}
#endif
