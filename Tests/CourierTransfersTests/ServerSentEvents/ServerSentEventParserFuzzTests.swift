import Foundation
import Testing
import Courier
import CourierTransfers

extension ServerSentEventsTests {
    /// The parser gives the same events for every split of the same bytes, and the same events as
    /// a plain transcription of WHATWG HTML §9.2.5–9.2.6 working on the whole decoded text.
    @Suite struct ParserFuzzTests {
        /// The reference server's scripted feed in miniature: BOM, comments, every line end,
        /// ids (one reset, one with NUL), retry (valid and not), multi-line data, non-ASCII text.
        static let scripted: [UInt8] =
            [0xEF, 0xBB, 0xBF]
            + Array(": welcome\r\nretry: 1500\r\n\r\nid: 1\r\nevent: tick\r\ndata: one\r\n\r\n".utf8)
            + Array("id: 2\rdata: two\rdata:  two b\r\r: keep-alive\n\nid: 3\ndata: caf\u{00E9} \u{1F600}\n\n".utf8)
            + Array("id: x\u{0}y\ndata: nul id ignored\n\nid\ndata: id reset\n\nretry: soon\ndata\n\n".utf8)
            + Array("event: end\nid: 9\ndata: last\r\n\r\ndata: never dispatched\n".utf8)

        @Test func everySplitOfTheScriptedFeedGivesTheSameEvents() throws {
            var whole = ServerSentEventParser()
            let expected = try ServerSentEventsTests.parse(Self.scripted, parser: &whole)
            #expect(expected.count == 7)
            #expect(expected.first == ServerSentEvent(type: "tick", data: "one", lastEventID: "1", retry: .milliseconds(1500)))
            #expect(expected.last == ServerSentEvent(type: "end", data: "last", lastEventID: "9"))
            var generator = SeededGenerator(seed: 0x5EED_0001)
            for round in 0..<300 {
                let chunks = Self.randomChunks(count: Self.scripted.count, round: round, using: &generator)
                var parser = ServerSentEventParser()
                let events = try ServerSentEventsTests.parse(Self.scripted, chunks: chunks, parser: &parser)
                #expect(events == expected, "chunks \(chunks)")
                #expect(parser.lastEventID == whole.lastEventID)
                #expect(parser.reconnectionTime == whole.reconnectionTime)
                let discarded = parser.finish()
                #expect(discarded)  // "never dispatched" is pending in every split
                if events != expected { return }
            }
        }

        @Test func oneByteChunksGiveTheSameEvents() throws {
            var whole = ServerSentEventParser()
            let expected = try ServerSentEventsTests.parse(Self.scripted, parser: &whole)
            var parser = ServerSentEventParser()
            let chunks = [Int](repeating: 1, count: Self.scripted.count)
            #expect(try ServerSentEventsTests.parse(Self.scripted, chunks: chunks, parser: &parser) == expected)
        }

        @Test func randomStreamsMatchTheReferenceInterpretationForEverySplit() throws {
            var generator = SeededGenerator(seed: 0x5EED_0002)
            var dispatched = 0
            for round in 0..<400 {
                let stream = Self.randomStream(using: &generator)
                let reference = ReferenceInterpretation(stream)
                var whole = ServerSentEventParser()
                let expected = try ServerSentEventsTests.parse(stream, parser: &whole)
                #expect(expected == reference.events, "stream \(String(decoding: stream, as: UTF8.self).debugDescription)")
                #expect(whole.lastEventID == reference.lastEventID)
                #expect(whole.reconnectionTime == reference.reconnectionTime)
                for _ in 0..<4 {
                    let chunks = Self.randomChunks(count: stream.count, round: round, using: &generator)
                    var parser = ServerSentEventParser()
                    let events = try ServerSentEventsTests.parse(stream, chunks: chunks, parser: &parser)
                    #expect(events == expected, "chunks \(chunks)")
                    #expect(parser.lastEventID == whole.lastEventID)
                }
                dispatched += expected.count
            }
            #expect(dispatched > 200)  // the generator does produce events, not only ignored lines
        }

        /// Chunk lengths covering `count` bytes: all 1-byte chunks every 10th round, else random
        /// lengths up to 1, 2, 3, 7 or 64 bytes.
        static func randomChunks(count: Int, round: Int, using generator: inout SeededGenerator) -> [Int] {
            if round % 10 == 0 { return [Int](repeating: 1, count: count) }
            let maximum = [1, 2, 3, 7, 64].randomElement(using: &generator) ?? 1
            var chunks: [Int] = []
            var covered = 0
            while covered < count {
                let length = Int.random(in: 1...maximum, using: &generator)
                chunks.append(length)
                covered += length
            }
            return chunks
        }

        static let lines = [
            "data", "data:", "data: x", "data:  two spaces", "data:no space", "data: caf\u{00E9} \u{1F600}", "event: add",
            "event:", "event: remove", "id: 1", "id: 22", "id", "id: a\u{0}b", "retry: 100", "retry: 2500", "retry: x1",
            "retry", ": comment", ":", "unknown: value", "data : spaced name", "Data: upper", "", "", "", "",
        ]

        static func randomStream(using generator: inout SeededGenerator) -> [UInt8] {
            var stream: [UInt8] = Bool.random(using: &generator) ? [0xEF, 0xBB, 0xBF] : []
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                stream += Array((lines.randomElement(using: &generator) ?? "").utf8)
                stream += Array((["\n", "\r", "\r\n"].randomElement(using: &generator) ?? "\n").utf8)
            }
            if Bool.random(using: &generator) {  // an unterminated tail
                stream += Array((lines.randomElement(using: &generator) ?? "").utf8)
            }
            return stream
        }
    }

    /// §9.2.5–9.2.6 transcribed as directly as possible: decode the whole stream, drop one BOM,
    /// split lines on CRLF / LF / CR, interpret each line, dispatch on blank lines, discard the rest.
    struct ReferenceInterpretation {
        var events: [ServerSentEvent] = []
        var lastEventID = ""
        var reconnectionTime: Duration?

        init(_ bytes: [UInt8]) {
            var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
            if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
            var lines: [String] = []
            var current = String.UnicodeScalarView()
            var index = 0
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "\r" || scalar == "\n" {
                    lines.append(String(current))
                    current = String.UnicodeScalarView()
                    if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" { index += 1 }
                } else {
                    current.append(scalar)
                }
                index += 1
            }
            // `current` is an unterminated line: discarded at the end of the stream.
            var data = ""
            var type = ""
            var idBuffer = ""
            var retry: Duration?
            for line in lines {
                if line.isEmpty {
                    lastEventID = idBuffer
                    if data.isEmpty {
                        type = ""
                        continue
                    }
                    data.removeLast()
                    events.append(
                        ServerSentEvent(type: type.isEmpty ? "message" : type, data: data, lastEventID: lastEventID, retry: retry)
                    )
                    data = ""
                    type = ""
                    retry = nil
                    continue
                }
                if line.hasPrefix(":") { continue }
                var name = line
                var value = ""
                if let colon = line.firstIndex(of: ":") {
                    name = String(line[..<colon])
                    value = String(line[line.index(after: colon)...])
                    if value.hasPrefix(" ") { value.removeFirst() }
                }
                switch name {
                case "event": type = value
                case "data": data += value + "\n"
                case "id" where !value.contains("\u{0}"): idBuffer = value
                case "retry" where !value.isEmpty && value.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }):
                    reconnectionTime = .milliseconds(Int64(value) ?? .max)
                    retry = reconnectionTime
                default: break
                }
            }
        }
    }
}
