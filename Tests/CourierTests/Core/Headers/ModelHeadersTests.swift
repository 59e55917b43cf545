import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Header fields from Encodable models")
struct ModelHeadersTests {
    enum Channel: String, Encodable { case beta, stable }

    struct ClientHeaders: Encodable {
        var appVersion: String
        var deviceID: UUID?
        var channel: Channel
        var retries: Int
        var debug: Bool
        var ratio: Double?
        var docs: URL?
        var since: Date?
        var authorization: String?

        enum CodingKeys: String, CodingKey {
            case appVersion = "X-App-Version"
            case deviceID = "X-Device-ID"
            case channel = "X-Channel"
            case retries = "X-Retries"
            case debug = "X-Debug"
            case ratio = "X-Ratio"
            case docs = "X-Docs"
            case since = "If-Modified-Since"
            case authorization = "Authorization"
        }
    }

    @Test("non-nil fields become fields named by the coding keys, in order; nil fields are absent")
    func fieldsFromModel() throws {
        let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let headers = try HTTPHeaders(
            encoding: ClientHeaders(
                appVersion: "4.2.1", deviceID: id, channel: .beta, retries: 3, debug: false, ratio: 0.25,
                docs: URL(string: "https://docs.example.test/a?b=c"), since: Date(timeIntervalSince1970: 784_111_777),
                authorization: nil))
        #expect(
            headers.fields.map(\.name) == [
                "X-App-Version", "X-Device-ID", "X-Channel", "X-Retries", "X-Debug", "X-Ratio", "X-Docs", "If-Modified-Since",
            ])
        #expect(headers["X-Device-ID"] == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(headers["X-Channel"] == "beta")
        #expect(headers["X-Retries"] == "3")
        #expect(headers["X-Debug"] == "false")
        #expect(headers["X-Ratio"] == "0.25")
        #expect(headers["X-Docs"] == "https://docs.example.test/a?b=c")
        #expect(headers["If-Modified-Since"] == "Sun, 06 Nov 1994 08:49:37 GMT")  // RFC 9110 §5.6.7's example
        #expect(!headers.contains("Authorization"))
        #expect(!headers.contains("X-Ratio ") && !headers.contains("deviceID"))
    }

    @Test("property names are used when there are no coding keys")
    func propertyNames() throws {
        struct Plain: Encodable {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            var Authorization: String?
            var anythingElse: String
        }
        let headers = try HTTPHeaders(encoding: Plain(Authorization: nil, anythingElse: "hello"))
        #expect(headers.fields == [HTTPHeaders.Field(name: "anythingElse", value: "hello")])
    }

    @Test("CR/LF in a value is an injection attempt: refused with a typed error naming the field, not the value")
    func injectionRefused() throws {
        struct Evil: Encodable {
            var note: String
            enum CodingKeys: String, CodingKey { case note = "X-Note" }
        }
        let error = #expect(throws: HeaderFieldError.invalidValue(field: "X-Note", problem: .lineBreak)) {
            try HTTPHeaders(encoding: Evil(note: "ok\r\nAuthorization: Bearer stolen"))
        }
        #expect(error.map { "\($0)" }?.contains("stolen") == false)
        #expect(throws: HeaderFieldError.invalidValue(field: "X-Note", problem: .lineBreak)) {
            try HTTPHeaders(encoding: Evil(note: "a\nb"))
        }
        #expect(throws: HeaderFieldError.invalidValue(field: "X-Note", problem: .controlCharacter)) {
            try HTTPHeaders(encoding: Evil(note: "a\u{0}b"))
        }
        #expect(throws: HeaderFieldError.invalidValue(field: "X-Note", problem: .nonASCII)) {
            try HTTPHeaders(encoding: Evil(note: "café"))
        }
        #expect(throws: HeaderFieldError.invalidValue(field: "X-Note", problem: .surroundingWhitespace)) {
            try HTTPHeaders(encoding: Evil(note: " padded"))
        }
        #expect(try HTTPHeaders(encoding: Evil(note: "tab\tinside"))["X-Note"] == "tab\tinside")
    }

    @Test("names that are not tokens, nested values, arrays, bare values and duplicates are refused")
    func refusals() {
        struct BadName: Encodable {
            var value = "x"
            enum CodingKeys: String, CodingKey { case value = "X Bad:Name" }
        }
        #expect(throws: HeaderFieldError.invalidName("X Bad:Name")) { try HTTPHeaders(encoding: BadName()) }
        struct Nested: Encodable {
            struct Inner: Encodable { var a = 1 }
            var inner = Inner()
        }
        #expect(throws: HeaderFieldError.unsupportedValue(field: "inner", type: "nested object")) {
            try HTTPHeaders(encoding: Nested())
        }
        struct Listy: Encodable { var tags = ["a", "b"] }
        #expect(throws: HeaderFieldError.unsupportedValue(field: "tags", type: "array")) { try HTTPHeaders(encoding: Listy()) }
        #expect(throws: HeaderFieldError.notAModel(type: "String")) { try HTTPHeaders(encoding: "text") }
        #expect(throws: HeaderFieldError.notAModel(type: "Array<String>")) { try HTTPHeaders(encoding: ["a"]) }
        struct Twice: Encodable {
            var a = "1", b = "2"
            enum CodingKeys: String, CodingKey {
                case a = "X-Same"
                case b = "x-same"
            }
        }
        #expect(throws: HeaderFieldError.duplicateField("x-same")) { try HTTPHeaders(encoding: Twice()) }
        struct NotFinite: Encodable { var ratio = Double.nan }
        #expect(throws: HeaderFieldError.unsupportedValue(field: "ratio", type: "non-finite number")) {
            try HTTPHeaders(encoding: NotFinite())
        }
    }

    struct Trace: Encodable {
        var traceID: String?
        var locale: String
        enum CodingKeys: String, CodingKey {
            case traceID = "X-Trace-ID"
            case locale = "Accept-Language"
        }
    }

    @Test("per-client and per-request model headers reach the transport; the request's win")
    func clientAndRequestHeaders() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let client = APIClient(environment: APIEnvironment(name: "t", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = stub
            $0.headers = try! HTTPHeaders(encoding: Trace(traceID: "client", locale: "en"))  // literal, valid model
        }
        try await client.send(Request<Void>.get("/a").headers(from: Trace(traceID: nil, locale: "fr")))
        let sent = try #require(stub.requests.first)
        #expect(sent.value(forHTTPHeaderField: "Accept-Language") == "fr")
        #expect(sent.value(forHTTPHeaderField: "X-Trace-ID") == "client")
        #expect(throws: HeaderFieldError.invalidValue(field: "Accept-Language", problem: .lineBreak)) {
            try Request<Void>.get("/a").headers(from: Trace(traceID: nil, locale: "en\r\nX-Admin: 1"))
        }
    }

    @Test("ModelHeadersInterceptor adds the model's fields per request; a bad model sends nothing")
    func interceptor() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let locale = Locked("de")
        let client = APIClient(environment: APIEnvironment(name: "t", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = stub
            $0.interceptors = [ModelHeadersInterceptor { Trace(traceID: nil, locale: locale.current) }]
        }
        try await client.send(Request<Void>.get("/a"))
        try await client.send(Request<Void>.get("/b").header("Accept-Language", "it"))
        #expect(stub.requests.map { $0.value(forHTTPHeaderField: "Accept-Language") } == ["de", "it"])
        #expect(stub.requests.allSatisfy { $0.value(forHTTPHeaderField: "X-Trace-ID") == nil })
        locale.set("de\r\nX-Injected: 1")
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/c")) }
        #expect(error?.description.contains("Accept-Language") == true)
        #expect(stub.requestCount == 2)
    }
}

@Suite("Environment and header errors read well")
struct EnvironmentAndHeaderErrorTextTests {
    @Test("localizedDescription shows the description (no value is repeated)")
    func localizedDescriptions() {
        let header: any Error = HeaderFieldError.invalidValue(field: "X-Note", problem: .lineBreak)
        #expect(header.localizedDescription == "the value of header 'X-Note' contains CR or LF")
        let environment: any Error = EnvironmentError.switchingForbidden(current: "production", channel: .appStore)
        #expect(
            environment.localizedDescription
                == "switching environments is forbidden in this build (App Store build); staying on 'production'")
    }
}
