import Foundation
import Courier
import CourierTransfers

/// Server-Sent Events: the parser (WHATWG HTML §9.2.5–9.2.6) and the reconnecting client.
enum ServerSentEventsTests {
    /// Parses `stream` delivered as `chunks` (byte lengths; the rest as one last chunk).
    static func parse(
        _ stream: [UInt8], chunks: [Int] = [], parser: inout ServerSentEventParser
    ) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        var offset = 0
        for length in chunks where offset < stream.count {
            let end = min(stream.count, offset + length)
            events += try parser.parse(Data(stream[offset..<end]))
            offset = end
        }
        events += try parser.parse(Data(stream[offset...]))
        return events
    }

    static func parse(_ text: String, chunks: [Int] = []) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        return try parse(Array(text.utf8), chunks: chunks, parser: &parser)
    }

    /// A small deterministic generator (SplitMix64) for reproducible fuzz inputs.
    struct SeededGenerator: RandomNumberGenerator {
        private var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
