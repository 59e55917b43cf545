import Foundation
import Testing
@testable import Courier

@Suite("MessageBody: iteration rules, collect, lines and NDJSON")
struct MessageBodyTests {
    /// A body from chunks, single-use like a network body.
    private func body(_ chunks: [Data]) -> MessageBody {
        let buffer = StreamBuffer(limit: Int.max, pausesProducer: false) {}
        for chunk in chunks { buffer.append(chunk) }
        buffer.finish()
        return MessageBody(buffer: buffer, length: .unknown)
    }

    private func body(_ text: String, splitAt cuts: [Int]) -> MessageBody {
        let bytes = Data(text.utf8)
        var chunks: [Data] = []
        var start = 0
        for cut in cuts.sorted() where cut > start && cut < bytes.count {
            chunks.append(bytes[start..<cut])
            start = cut
        }
        chunks.append(bytes[start...])
        return body(chunks)
    }

    @Test("a single-use body read twice throws alreadyIterated instead of yielding nothing")
    func singleUse() async throws {
        let body = body([Data("ab".utf8)])
        #expect(try await body.collect(upTo: 10) == Data("ab".utf8))
        await #expect(throws: MessageBodyError.alreadyIterated) { try await body.collect(upTo: 10) }
    }

    @Test("an in-memory body can be read many times")
    func multipleUse() async throws {
        let body = MessageBody(Data("abc".utf8))
        #expect(body.length == .known(3))
        #expect(body.iterationBehavior == .multiple)
        #expect(try await body.collect(upTo: 3) == Data("abc".utf8))
        #expect(try await body.collect(upTo: 3) == Data("abc".utf8))
        await #expect(throws: MessageBodyError.tooLarge(maxBytes: 2)) { try await body.collect(upTo: 2) }
    }

    @Test("collect stops at the limit")
    func collectLimit() async throws {
        await #expect(throws: MessageBodyError.tooLarge(maxBytes: 3)) {
            try await body([Data("ab".utf8), Data("cd".utf8)]).collect(upTo: 3)
        }
    }

    @Test("a wrapped async sequence skips empty chunks")
    func wrappedSequence() async throws {
        let stream = AsyncStream<Data> { continuation in
            for part in ["a", "", "bc"] { continuation.yield(Data(part.utf8)) }
            continuation.finish()
        }
        var chunks: [Data] = []
        for try await chunk in MessageBody(stream) { chunks.append(chunk) }
        #expect(chunks == [Data("a".utf8), Data("bc".utf8)])
    }

    @Test("lines split on LF and CRLF only; a CRLF split across chunks is one line end")
    func lineEnds() async throws {
        let text = "one\ntwo\r\nthree\rstill three\u{2028}and\u{85}this\r\n\nlast"
        var lines: [String] = []
        for try await line in body(text, splitAt: [8]).lines() { lines.append(line) }  // cut between CR and LF
        #expect(lines == ["one", "two", "three\rstill three\u{2028}and\u{85}this", "", "last"])
    }

    @Test("every chunk split of the same bytes gives the same lines", arguments: 0..<40)
    func lineSplitFuzz(seed: Int) async throws {
        var generator = RedactorTests.SeededGenerator(seed: UInt64(seed))
        let text = "a\r\nbb\n\r\n{\"x\":\"\u{2028}\\r\"}\r\ncc\rdd\n\u{85}\r\n\r"
        let count = Data(text.utf8).count
        let cuts = (0..<Int.random(in: 1...8, using: &generator)).map { _ in Int.random(in: 1..<count, using: &generator) }
        var lines: [String] = []
        for try await line in body(text, splitAt: cuts).lines() { lines.append(line) }
        #expect(lines == ["a", "bb", "", "{\"x\":\"\u{2028}\\r\"}", "cc\rdd", "\u{85}", "\r"])
    }

    @Test("random bytes in random chunks split as the whole text split at LF, limit included", arguments: 0..<60)
    func lineSplitMatchesWholeText(seed: Int) async throws {
        var generator = RedactorTests.SeededGenerator(seed: UInt64(seed) &+ 1000)
        let alphabet: [UInt8] = [0x61, 0x62, 0x0D, 0x0A, 0x20]
        let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0x61
        }
        let limit = Int.random(in: 1...40, using: &generator)
        // The reference: every LF ends a line (one CR before it dropped); a last piece without
        // an LF is a line when not empty; the first line longer than `limit` fails the body.
        var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if pieces.last?.isEmpty ?? false { pieces.removeLast() }
        let expected = pieces.enumerated().map { index, piece in
            index < pieces.count - 1 || bytes.last == 0x0A ? (piece.last == 0x0D ? Array(piece.dropLast()) : piece) : piece
        }
        let tooLong = expected.firstIndex { $0.count > limit }
        let cuts = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
            Int.random(in: 1...max(1, bytes.count), using: &generator)
        }
        var chunks: [Data] = []
        var start = 0
        let whole = Data([0xFF, 0xFF] + bytes).dropFirst(2)  // slices whose indices do not start at 0
        for cut in Set(cuts).sorted() where cut > start && cut < bytes.count {
            chunks.append(whole[(whole.startIndex + start)..<(whole.startIndex + cut)])
            start = cut
        }
        chunks.append(whole[(whole.startIndex + start)...])
        var lines: [[UInt8]] = []
        var failure: MessageBodyError?
        do {
            for try await line in body(chunks).lines(maxLineLength: limit) { lines.append(Array(line.utf8)) }
        } catch let error as MessageBodyError {
            failure = error
        }
        #expect(lines == Array(expected.prefix(tooLong ?? expected.count)))
        #expect(failure == (tooLong == nil ? nil : .lineTooLong(maxBytes: limit)))
    }

    @Test("a last line without a line end obeys the limit too, and keeps a final lone CR")
    func lastLine() async throws {
        await #expect(throws: MessageBodyError.lineTooLong(maxBytes: 1)) {
            for try await _ in body("ab", splitAt: []).lines(maxLineLength: 1) {}
        }
        var lines: [String] = []
        for try await line in body("a\n\r", splitAt: [2]).lines() { lines.append(line) }
        #expect(lines == ["a", "\r"])
    }

    @Test("a line longer than the limit fails instead of growing memory")
    func lineTooLong() async throws {
        let chunks = (0..<10).map { _ in Data(repeating: 0x61, count: 100) }
        await #expect(throws: MessageBodyError.lineTooLong(maxBytes: 250)) {
            for try await _ in body(chunks).lines(maxLineLength: 250) {}
        }
    }

    struct Record: Decodable, Equatable {
        var id: Int
        var name: String
    }

    @Test("NDJSON decodes one value per line and skips blank lines")
    func ndjson() async throws {
        let text = "{\"id\":1,\"name\":\"a\\u2028\"}\r\n\n   \n{\"id\":2,\"name\":\"b\u{2028}c\"}\n"
        var records: [Record] = []
        for try await record in body(text, splitAt: [5, 30]).ndjson(as: Record.self) { records.append(record) }
        #expect(records == [Record(id: 1, name: "a\u{2028}"), Record(id: 2, name: "b\u{2028}c")])
    }

    @Test("an unparseable NDJSON line is an error naming its line number")
    func ndjsonBadLine() async throws {
        let text = "{\"id\":1,\"name\":\"a\"}\n\n{\"id\":\"two\",\"name\":\"b\"}\n"
        var records: [Record] = []
        do {
            for try await record in body(text, splitAt: [3]).ndjson(as: Record.self) { records.append(record) }
            Issue.record("expected an error")
        } catch let MessageBodyError.undecodableLine(number, reason) {
            #expect(number == 3)
            #expect(reason.contains("id"))
        }
        #expect(records == [Record(id: 1, name: "a")])
    }
}
