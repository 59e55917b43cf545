import Foundation
import Testing
@testable import CourierRealtime

@Suite("Frames a hostile peer sends never trap the RFC 6455 parser") struct HostileFrameTests {
    @Test("generated frame heads and payloads, and extension offers (fixed seed)")
    func framesNeverTrap() {
        var state: UInt64 = UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap(UInt64.init) ?? 1)
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return (state >> 33) ^ state
        }
        let count = Int(ProcessInfo.processInfo.environment["FUZZ_COUNT"] ?? "") ?? 3000
        for _ in 0..<count {
            var parser = FrameParser(maximumPayload: 1 << 16)
            parser.allowsCompression = next() % 2 == 0
            var assembler = MessageAssembler(maximumMessageSize: 1 << 16)
            for _ in 0..<Int(next() % 4) {
                var bytes: [UInt8] = []
                let first = UInt8(truncatingIfNeeded: next())
                let lengthKind = next() % 4
                var second = UInt8(truncatingIfNeeded: next()) & 0x80
                switch lengthKind {
                case 0: second |= UInt8(next() % 126)
                case 1: second |= 126
                default: second |= 127
                }
                bytes += [first, second]
                for _ in 0..<Int(next() % 16) { bytes.append(UInt8(truncatingIfNeeded: next())) }
                parser.append(bytes)
                while true {
                    guard let frame = try? parser.next() else { break }
                    _ = try? assembler.append(frame)
                }
            }
            _ = try? DeflateNegotiation.accept(
                [
                    "permessage-deflate; client_max_window_bits=\(Int(next() % 40) - 5); server_max_window_bits=99999999999999999999"
                ],
                offer: nil)
        }
    }
}
