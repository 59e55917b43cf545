import Foundation
import Testing
import Courier
@testable import CourierTransfers

@Suite("Event streams and download fields a hostile server sends never trap a parser") struct HostileStreamInputTests {
    @Test("generated streams cut at random points, Content-Range and digest fields (fixed seed)")
    func parsersNeverTrap() throws {
        var state: UInt64 = UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap(UInt64.init) ?? 1)
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return (state >> 33) ^ state
        }
        let pieces = [
            "data:", "data: x", "id:", "id: \u{0}", "retry:", "retry: 99999999999999999999999", "retry: -1", "event:",
            ":", "\n", "\r", "\r\n", "\u{FEFF}", "é", "\u{0}", " ", "bytes 0-1/2", "bytes */9223372036854775807",
            "bytes 9223372036854775807-9223372036854775807/9223372036854775808", "sha-256=:", ":", "=", "a", "AAAA",
            "bytes 5-3/10", "bytes 0-0/0", "bytes -1-2/3", "bytes 0-18446744073709551615/*",
        ]
        let count = Int(ProcessInfo.processInfo.environment["FUZZ_COUNT"] ?? "") ?? 3000
        for _ in 0..<count {
            var text = ""
            for _ in 0..<Int(next() % 10) {
                if next() % 2 == 0 {
                    text += pieces[Int(next() % UInt64(pieces.count))]
                } else {
                    text += String(UnicodeScalar(UInt8(next() % 128)))
                }
            }
            var parser = ServerSentEventParser(maximumEventSize: 64)
            let bytes = Data(text.utf8)
            let cut = bytes.isEmpty ? 0 : Int(next() % UInt64(bytes.count))
            _ = try? parser.parse(bytes.prefix(cut))
            _ = try? parser.parse(bytes.dropFirst(cut))
            _ = DownloadContentRange(text)
            var headers = HTTPHeaders()
            headers.add("Repr-Digest", text)
            headers.add("Digest", text)
            _ = DownloadDigest.expected(in: headers)
            _ = DownloadDigest.structuredSHA256([text])
            _ = DownloadDigest.legacySHA256([text])
        }
    }
}
