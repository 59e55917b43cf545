import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Text decoding, typed errors and JSON diagnosis on odd server input: byte-order marks against
/// labels, cut code units, `String?` text bodies, envelope messages, impossible HTTP-dates, the
/// key path of a number that does not fit, one lossy report per skip.
@Suite struct OddServerInputTests {
    static func response(_ bytes: [UInt8], _ contentType: String) -> HTTPResponse {
        HTTPResponse(statusCode: 200, headers: ["Content-Type": contentType], body: Data(bytes))
    }

    @Test("text(): a UTF-32 byte-order mark is dropped, as the doc promises")
    func utf32BOMDropped() throws {
        let be = Self.response([0x00, 0x00, 0xFE, 0xFF, 0x00, 0x00, 0x00, 0x41], "text/plain; charset=utf-32be")
        let le = Self.response([0xFF, 0xFE, 0x00, 0x00, 0x41, 0x00, 0x00, 0x00], "text/plain; charset=utf-32le")
        #expect(try be.text() == "A")
        #expect(try le.text() == "A")
    }

    @Test("text(): a BOM that contradicts the label is no silent U+FFFE / mojibake")
    func contradictingBOM() throws {
        // A UTF-16BE BOM under a utf-16le label: the BOM decides (WHATWG decode), never U+FFFE.
        let swapped = Self.response([0xFE, 0xFF, 0x41, 0x00], "text/plain; charset=utf-16le")
        #expect(try swapped.text() == "\u{4100}")
        // A UTF-8 BOM under a Latin-1 label: the BOM wins, never "ï»¿A".
        let latin = Self.response([0xEF, 0xBB, 0xBF, 0x41], "text/plain; charset=iso-8859-1")
        let latinText = try? latin.text()
        #expect(latinText == nil || latinText == "A")
    }

    @Test("text(): a UTF-16 body with an odd trailing byte is malformed, not silently truncated")
    func utf16OddLength() {
        let truncated = Self.response([0x00, 0x41, 0x00], "text/plain; charset=utf-16be")
        #expect(throws: TextDecodingError(reason: .malformedBytes, charset: "utf-16be")) { try truncated.text() }
    }

    @Test("text(): valid EUC-JP (a listed charset) decodes, or is reported unsupported — never 'not valid euc-jp'")
    func eucJP() {
        let hiragana = Self.response([0xA4, 0xA2], "text/plain; charset=euc-jp")  // "あ"
        do {
            #expect(try hiragana.text() == "あ")
        } catch let error as TextDecodingError {
            #expect(error.reason == .unsupportedCharset, "valid EUC-JP reported as \(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("decodeJSON: a String? response type honours a text/plain body like String does")
    func optionalStringText() throws {
        let context = ResponseDecodingContext(method: .get, decoder: JSONDecoder())
        let plain = HTTPResponse.status(200, body: "hello", contentType: "text/plain; charset=utf-8")
        #expect(try context.decodeJSON(String.self, from: plain) == "hello")
        let optional = try context.decodeJSON(String?.self, from: plain)
        #expect(optional == "hello")
    }

    @Test("client: GET of String? on a text/plain 200 returns the text", .timeLimit(.minutes(1)))
    func optionalStringThroughClient() async throws {
        let stub = StubTransport(responses: [.status(200, body: "pong", contentType: "text/plain")])
        let value = try await CoreFixture.client(stub).send(Request<String?>.get("/ping"))
        #expect(value == "pong")
    }

    // fixed keys), never the APIProblem's message the validator extracted.
    @Test("userMessage of .rejected shows the envelope's message (custom errorKey)", .timeLimit(.minutes(1)))
    func rejectedMessage() async throws {
        let stub = StubTransport(responses: [
            .json(#"{"ok":false,"fault":{"code":"card_declined","message":"Your card was declined."}}"#)
        ])
        let client = CoreFixture.client(stub) { $0.validators = [ErrorEnvelopeValidator(successKey: "ok", errorKey: "fault")] }
        let error = await CoreFixture.networkError { try await client.send(Request<CoreFixture.Item>.get("/pay")) }
        guard case .rejected(let problem)? = error else {
            Issue.record("expected rejected, got \(String(describing: error))")
            return
        }
        #expect(problem.message == "Your card was declined.")
        #expect(error?.userMessage == "Your card was declined.")
    }

    // every non-4xx (3xx, 1xx, 6xx+) to `.server` ("something went wrong on our side").
    @Test("userMessage of a .server error never shows the body's text, whatever the status", arguments: [302, 304, 600, 999])
    func serverTextHidden(status: Int) {
        let response = HTTPResponse.status(
            status, body: #"{"message":"upstream pool db-3 exhausted at 10.0.3.7"}"#, contentType: "application/json")
        let error = NetworkError(response: response)
        #expect(error.kind == .server)
        #expect(error.userMessage == "Something went wrong on our side.")
    }

    @Test("HTTP-date: an impossible calendar date is rejected, not rolled into the next month")
    func impossibleHTTPDate() {
        #expect(HTTPDate.parse("Tue, 31 Feb 2026 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Thu, 31 Apr 2026 08:49:37 GMT") == nil)
        #expect(RetryAfter(headerValue: "Tue, 31 Feb 2026 08:49:37 GMT") == nil)
    }
}

extension OddServerInputTests {
    // outside Int64) only those are searched; a culprit inside Int64 (-1 into UInt, 300 into UInt8,
    // 3e9 into Int32) is never found and the body is reported as invalid JSON.
    struct Order: Decodable {
        var price: Double
        var quantity: UInt
    }
    struct Row: Decodable {
        var id: UInt64
        var flags: UInt8
    }

    @Test("decodeJSON: a number that does not fit is reported at its key path even when the body has a fraction elsewhere")
    func diagnosisMissesInRangeCulprit() throws {
        let context = ResponseDecodingContext(method: .get, decoder: JSONDecoder())
        let order = HTTPResponse.json(#"{"price": 12.5, "quantity": -1}"#)
        do {
            _ = try context.decodeJSON(Order.self, from: order)
            Issue.record("decoded a negative quantity into UInt")
        } catch let error as DecodingError {
            #expect(error.codingPathDescription == "quantity", "\(error.debugSummary)")
        }
        let row = HTTPResponse.json(#"{"id": 18446744073709551615, "flags": 300}"#)
        do {
            _ = try context.decodeJSON(Row.self, from: row)
            Issue.record("decoded 300 into UInt8")
        } catch let error as DecodingError {
            #expect(error.codingPathDescription == "flags", "\(error.debugSummary)")
        }
    }

    // again with the client's decoder, so its LossyDecodingReporter hears every skip several times.
    struct Tag: Decodable { var name: String }
    struct Page: Decodable {
        @LossyArray var tags: [Tag]
        var total: Int64
    }

    @Test("a LossyDecodingReporter hears each skipped element once per response")
    func reporterNotRepeated() throws {
        let reporter = LossyDecodingReporter()
        let decoder = JSONDecoder()
        decoder.userInfo[.lossyDecodingReporter] = reporter
        let context = ResponseDecodingContext(method: .get, decoder: decoder)
        let body = HTTPResponse.json(
            #"{"tags": [{"name": "a"}, {"name": 7}, {"name": "c"}], "total": 9223372036854775808}"#)
        #expect(throws: DecodingError.self) { try context.decodeJSON(Page.self, from: body) }
        #expect(reporter.skips.count <= 1, "skips reported: \(reporter.skips.map(\.description))")
    }
}
