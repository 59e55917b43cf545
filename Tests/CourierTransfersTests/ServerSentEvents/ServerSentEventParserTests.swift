import Foundation
import Testing
import Courier
import CourierTransfers

extension ServerSentEventsTests {
    /// The parsing and interpretation rules of WHATWG HTML §9.2.5–9.2.6, one vector per rule
    /// (the spec's own examples first).
    @Suite struct ParserTests {
        typealias Event = ServerSentEvent

        // MARK: The specification's examples

        @Test func specStockTickerExampleJoinsDataLinesWithLF() throws {
            let events = try ServerSentEventsTests.parse("data: YHOO\ndata: +2\ndata: 10\n\n")
            #expect(events == [Event(data: "YHOO\n+2\n10")])
        }

        @Test func specFourBlocksExample() throws {
            // §9.2.6: a comment block; "first event" with id 1; "second event" with the id reset;
            // " third event" (one leading space kept) never dispatched: no blank line follows.
            let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
            var parser = ServerSentEventParser()
            let events = try ServerSentEventsTests.parse(Array(stream.utf8), parser: &parser)
            #expect(events == [Event(data: "first event", lastEventID: "1"), Event(data: "second event", lastEventID: "")])
            let discarded = parser.finish()
            #expect(discarded)  // " third event" was pending and is discarded
            #expect(try parser.parse(Data("\n".utf8)).isEmpty)
        }

        @Test func specEmptyDataExampleDispatchesEmptyAndNewline() throws {
            // "data\n\ndata\ndata\n\ndata:" → "" and "\n"; the last block has no blank line.
            let events = try ServerSentEventsTests.parse("data\n\ndata\ndata\n\ndata:")
            #expect(events == [Event(data: ""), Event(data: "\n")])
        }

        @Test func specSpaceAfterColonExample() throws {
            let events = try ServerSentEventsTests.parse("data:test\n\ndata: test\n\n")
            #expect(events == [Event(data: "test"), Event(data: "test")])
        }

        // MARK: Byte order mark

        @Test func oneLeadingByteOrderMarkIsDropped() throws {
            #expect(try ServerSentEventsTests.parse("\u{FEFF}data: a\n\n") == [Event(data: "a")])
        }

        @Test func aSecondByteOrderMarkIsPartOfTheFieldName() throws {
            // The second BOM makes the name "\u{FEFF}data": unknown, ignored.
            #expect(try ServerSentEventsTests.parse("\u{FEFF}\u{FEFF}data: a\n\n").isEmpty)
        }

        @Test func aByteOrderMarkLaterInTheStreamIsData() throws {
            #expect(
                try ServerSentEventsTests.parse("data: a\n\ndata: \u{FEFF}b\n\n") == [Event(data: "a"), Event(data: "\u{FEFF}b")])
        }

        @Test(arguments: [[1], [2], [1, 1], [1, 1, 1], [3], [4]])
        func aByteOrderMarkSplitAcrossChunksIsDropped(chunks: [Int]) throws {
            #expect(try ServerSentEventsTests.parse("\u{FEFF}data: a\n\n", chunks: chunks) == [Event(data: "a")])
        }

        @Test func aPartialByteOrderMarkIsKeptAsData() throws {
            // EF BB then "x": not a BOM, so the bytes start the line (an invalid UTF-8 sequence → U+FFFD).
            let bytes: [UInt8] = [0xEF, 0xBB] + Array("x\n\ndata: a\n\n".utf8)
            var parser = ServerSentEventParser()
            #expect(try ServerSentEventsTests.parse(bytes, chunks: [1, 1], parser: &parser) == [Event(data: "a")])
            let data: [UInt8] = Array("data: ".utf8) + [0xEF, 0xBB] + Array("\n\n".utf8)
            var second = ServerSentEventParser()
            #expect(try ServerSentEventsTests.parse(data, parser: &second) == [Event(data: "\u{FFFD}")])
        }

        @Test func finishAllowsAByteOrderMarkAgainOnTheNextStream() throws {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data("\u{FEFF}data: a\n\n".utf8)) == [Event(data: "a")])
            let discarded = parser.finish()
            #expect(!discarded)
            #expect(try parser.parse(Data("\u{FEFF}data: b\n\n".utf8)) == [Event(data: "b")])
        }

        // MARK: Line ends

        @Test(arguments: ["\n", "\r", "\r\n"])
        func everyLineEndWorks(_ end: String) throws {
            let stream = "event: e\(end)data: a\(end)data: b\(end)\(end)"
            #expect(try ServerSentEventsTests.parse(stream) == [Event(type: "e", data: "a\nb")])
        }

        @Test func mixedLineEnds() throws {
            let events = try ServerSentEventsTests.parse("data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r")
            #expect(events == [Event(data: "a\nb\nc"), Event(data: "d")])
        }

        @Test func twoCarriageReturnsAreTwoLineEnds() throws {
            #expect(try ServerSentEventsTests.parse("data: a\r\rdata: b\r\r") == [Event(data: "a"), Event(data: "b")])
        }

        @Test func lineFeedThenCarriageReturnIsTwoLineEnds() throws {
            #expect(try ServerSentEventsTests.parse("data: a\n\rdata: b\n\n") == [Event(data: "a"), Event(data: "b")])
        }

        @Test func carriageReturnAndLineFeedSplitAcrossChunksAreOneLineEnd() throws {
            // "data: a\r" | "\ndata: b\r" | "\n\r" | "\n" — were the LFs counted as extra line ends,
            // "a" would be dispatched alone.
            let events = try ServerSentEventsTests.parse("data: a\r\ndata: b\r\n\r\n", chunks: [8, 10, 2])
            #expect(events == [Event(data: "a\nb")])
        }

        @Test func carriageReturnAtTheEndOfAChunkFollowedByEmptyChunks() throws {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data("data: a\r".utf8)).isEmpty)
            #expect(try parser.parse(Data()).isEmpty)
            #expect(try parser.parse(Data("\n".utf8)).isEmpty)  // still the same line end
            #expect(try parser.parse(Data("\n".utf8)) == [Event(data: "a")])
        }

        // MARK: Fields

        @Test func commentsAreIgnored() throws {
            let events = try ServerSentEventsTests.parse(":\n: keep-alive\ndata: a\n:data: b\n\n:\n\n")
            #expect(events == [Event(data: "a")])
        }

        @Test func onlyOneLeadingSpaceIsStripped() throws {
            let events = try ServerSentEventsTests.parse("data:   a \nevent:  t\n\n")
            #expect(events == [Event(type: " t", data: "  a ")])
        }

        @Test func aTabAfterTheColonIsKept() throws {
            #expect(try ServerSentEventsTests.parse("data:\ta\n\n") == [Event(data: "\ta")])
        }

        @Test func onlyTheFirstColonSeparatesNameAndValue() throws {
            #expect(try ServerSentEventsTests.parse("data: a: b:c\n\n") == [Event(data: "a: b:c")])
        }

        @Test func aLineWithoutColonIsAFieldWithAnEmptyValue() throws {
            #expect(try ServerSentEventsTests.parse("data\ndata\n\n") == [Event(data: "\n")])
        }

        @Test func fieldNamesAreCaseSensitiveAndExact() throws {
            // "Data", "data " (space before the colon) and "datum" are unknown fields.
            #expect(try ServerSentEventsTests.parse("Data: a\ndata : b\ndatum: c\n\n").isEmpty)
        }

        @Test func unknownFieldsAreIgnored() throws {
            #expect(try ServerSentEventsTests.parse("foo: bar\ndata: a\nbaz\n\n") == [Event(data: "a")])
        }

        @Test func eventSetsTheTypeAndAnEmptyEventMeansMessage() throws {
            let events = try ServerSentEventsTests.parse("event: add\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\n")
            #expect(events.map(\.type) == ["add", "message", "message"])
        }

        @Test func theLastEventFieldOfABlockWins() throws {
            #expect(try ServerSentEventsTests.parse("event: a\nevent: b\ndata: x\n\n").map(\.type) == ["b"])
        }

        @Test func theTypeDoesNotCarryOverToTheNextEvent() throws {
            let events = try ServerSentEventsTests.parse("event: a\ndata: x\n\ndata: y\n\n")
            #expect(events.map(\.type) == ["a", "message"])
        }

        @Test func aBlockWithoutDataDispatchesNothingAndForgetsItsType() throws {
            #expect(try ServerSentEventsTests.parse("event: a\n\ndata: y\n\n") == [Event(data: "y")])
        }

        // MARK: id

        @Test func theIDCarriesOverToLaterEvents() throws {
            let events = try ServerSentEventsTests.parse("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
            #expect(events.map(\.lastEventID) == ["1", "1", "2"])
        }

        @Test func anEmptyIDResetsTheLastEventID() throws {
            var parser = ServerSentEventParser()
            let stream = Array("id: 1\ndata: a\n\nid\ndata: b\n\nid: 3\ndata: c\n\nid:\ndata: d\n\n".utf8)
            let events = try ServerSentEventsTests.parse(stream, parser: &parser)
            #expect(events.map(\.lastEventID) == ["1", "", "3", ""])
            #expect(parser.lastEventID == "")
        }

        @Test func anIDContainingNULIsIgnored() throws {
            var parser = ServerSentEventParser()
            let stream: [UInt8] = Array("id: 1\ndata: a\n\nid: 2".utf8) + [0] + Array("x\ndata: b\n\n".utf8)
            let events = try ServerSentEventsTests.parse(stream, parser: &parser)
            #expect(events.map(\.lastEventID) == ["1", "1"])
            #expect(parser.lastEventID == "1")
        }

        @Test func anIDInABlockWithoutDataStillBecomesTheLastEventID() throws {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data("id: 7\n\n".utf8)).isEmpty)
            #expect(parser.lastEventID == "7")
        }

        @Test func anIDInAnUnterminatedBlockIsNotTheLastEventID() throws {
            var parser = ServerSentEventParser(lastEventID: "5")
            #expect(try parser.parse(Data("id: 6\ndata: a\n".utf8)).isEmpty)
            #expect(parser.lastEventID == "5")
            let discarded = parser.finish()
            #expect(discarded)
            // The discarded block's id is forgotten; the next stream continues from "5".
            #expect(try parser.parse(Data("data: b\n\n".utf8)) == [Event(data: "b", lastEventID: "5")])
        }

        @Test func theIDIsKeptAcrossStreams() throws {
            var parser = ServerSentEventParser()
            _ = try parser.parse(Data("id: 9\ndata: a\n\n".utf8))
            parser.finish()
            #expect(try parser.parse(Data("data: b\n\n".utf8)) == [Event(data: "b", lastEventID: "9")])
        }

        // MARK: retry

        @Test func retrySetsTheReconnectionTimeInMilliseconds() throws {
            var parser = ServerSentEventParser()
            let events = try parser.parse(Data("retry: 2500\ndata: a\n\ndata: b\n\n".utf8))
            #expect(events == [Event(data: "a", retry: .milliseconds(2500)), Event(data: "b")])
            #expect(parser.reconnectionTime == .milliseconds(2500))
        }

        @Test func aRetryOnlyBlockSetsTheReconnectionTimeForTheNextEvent() throws {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data("retry: 10000\n\n".utf8)).isEmpty)
            #expect(parser.reconnectionTime == .seconds(10))
            #expect(try parser.parse(Data("data: a\n\n".utf8)) == [Event(data: "a", retry: .seconds(10))])
        }

        @Test(arguments: [
            "retry: one thousand", "retry: 1.5", "retry: -1", "retry: 10 ", "retry:", "retry", "retry: +5", "retry: 1e3",
        ])
        func aRetryThatIsNotOnlyASCIIDigitsIsIgnored(_ line: String) throws {
            var parser = ServerSentEventParser()
            _ = try parser.parse(Data("retry: 3000\n\n\(line)\ndata: a\n\n".utf8))
            #expect(parser.reconnectionTime == .seconds(3))
        }

        @Test func nonASCIIDigitsAreNotDigits() throws {
            var parser = ServerSentEventParser()
            _ = try parser.parse(Data("retry: \u{0661}\u{0662}\n\n".utf8))  // ARABIC-INDIC ONE, TWO
            #expect(parser.reconnectionTime == nil)
        }

        @Test func retryZeroAndAHugeValueAreAccepted() throws {
            var parser = ServerSentEventParser()
            _ = try parser.parse(Data("retry: 0\n\n".utf8))
            #expect(parser.reconnectionTime == .zero)
            _ = try parser.parse(Data("retry: 99999999999999999999999999\n\n".utf8))
            #expect(parser.reconnectionTime == .milliseconds(Int64.max))
        }

        // MARK: End of stream, encoding, limits

        @Test func anIncompleteEventAtTheEndOfTheStreamIsDiscarded() throws {
            var parser = ServerSentEventParser()
            let events = try parser.parse(Data("data: a\n\ndata: b\n".utf8))
            #expect(events == [Event(data: "a")])
            let discarded = parser.finish()
            #expect(discarded)
            let again = parser.finish()
            #expect(!again)
        }

        @Test func anUnterminatedLastLineIsDiscarded() throws {
            var parser = ServerSentEventParser()
            #expect(try parser.parse(Data("data: a\n\ndata: b".utf8)) == [Event(data: "a")])
            let discarded = parser.finish()
            #expect(discarded)
            #expect(try parser.parse(Data("\n\n".utf8)).isEmpty)  // "b" does not come back
        }

        @Test func invalidUTF8BecomesReplacementCharacters() throws {
            let stream: [UInt8] = Array("data: a".utf8) + [0xFF, 0xC3] + Array("\nevent: \u{00E9}\n\n".utf8)
            var parser = ServerSentEventParser()
            let events = try ServerSentEventsTests.parse(stream, chunks: [8], parser: &parser)
            #expect(events == [Event(type: "\u{00E9}", data: "a\u{FFFD}\u{FFFD}")])
        }

        @Test func multiByteCharactersSplitAcrossChunksSurvive() throws {
            let text = "data: caf\u{00E9} \u{1F600}\n\n"
            for split in 1..<text.utf8.count {
                #expect(try ServerSentEventsTests.parse(text, chunks: [split]) == [Event(data: "caf\u{00E9} \u{1F600}")])
            }
        }

        @Test func anEventLargerThanTheLimitThrows() throws {
            var parser = ServerSentEventParser(maximumEventSize: 64)
            let line = Data(("data: " + String(repeating: "x", count: 40) + "\n").utf8)
            #expect(try parser.parse(line).isEmpty)
            #expect(throws: ServerSentEventError.eventTooLarge(limit: 64)) { try parser.parse(line) }
            // The oversized event is discarded up to the blank line that ends it (its later lines
            // too); the parser goes on with the next one.
            #expect(try parser.parse(Data("data: more of it\n\ndata: ok\n\n".utf8)) == [Event(data: "ok")])
        }

        @Test func eventsBeforeAnOversizedOneInTheSameChunkAreReturnedAndTheFailureComesNext() throws {
            let stream = "id: 1\ndata: ok\n\ndata: " + String(repeating: "x", count: 100) + "\n\nid: 3\ndata: after\n\n"
            var parser = ServerSentEventParser(maximumEventSize: 64)
            #expect(try parser.parse(Data(stream.utf8)) == [Event(data: "ok", lastEventID: "1")])
            #expect(parser.lastEventID == "1")
            #expect(throws: ServerSentEventError.eventTooLarge(limit: 64)) { try parser.parse(Data("id: 4\n".utf8)) }
            // Nothing after the oversized event is lost, the bytes of the throwing call included.
            #expect(
                try parser.parse(Data("data: four\n\n".utf8)) == [
                    Event(data: "after", lastEventID: "3"), Event(data: "four", lastEventID: "4"),
                ])
        }

        @Test func theRestOfAnOversizedLineIsNeverReadAsALineOfItsOwn() throws {
            var parser = ServerSentEventParser(maximumEventSize: 32)
            #expect(throws: ServerSentEventError.eventTooLarge(limit: 32)) {
                try parser.parse(Data(("data: " + String(repeating: "x", count: 40)).utf8))
            }
            #expect(try parser.parse(Data("xxxx\ndata: injected\n\n".utf8)).isEmpty)
            #expect(try parser.parse(Data("data: next\n\n".utf8)) == [Event(data: "next")])
        }

        @Test(arguments: [1, 7, 30, 64])
        func anOversizedEventIsSkippedWhateverTheChunks(_ size: Int) throws {
            let stream = "data: a\n\ndata: " + String(repeating: "x", count: 50) + "\r\ndata: y\r\n\r\ndata: b\n\n"
            var parser = ServerSentEventParser(maximumEventSize: 32)
            var events: [Event] = []
            var failures = 0
            var rest = Substring(stream)
            while !rest.isEmpty {
                let chunk = rest.prefix(size)
                rest = rest.dropFirst(size)
                do { events += try parser.parse(Data(chunk.utf8)) } catch { failures += 1 }
            }
            for _ in 0..<2 {  // the stream ended: empty chunks bring what waits (a failure, bytes after it)
                do { events += try parser.parse(Data()) } catch { failures += 1 }
            }
            #expect(events == [Event(data: "a"), Event(data: "b")])
            #expect(failures == 1)
        }

        @Test func aLineLargerThanTheLimitThrowsWhileItIsStillArriving() throws {
            var parser = ServerSentEventParser(maximumEventSize: 16)
            #expect(try parser.parse(Data("data: 0123456789".utf8)).isEmpty)
            #expect(throws: ServerSentEventError.eventTooLarge(limit: 16)) { try parser.parse(Data("x".utf8)) }
        }

        @Test func manyEventsInOneChunkAndCommentsBetweenThem() throws {
            let stream = (0..<100).map { ": tick\nid: \($0)\ndata: \($0)\n\n" }.joined()
            let events = try ServerSentEventsTests.parse(stream)
            #expect(events.count == 100)
            #expect(events.last == Event(data: "99", lastEventID: "99"))
        }
    }
}
