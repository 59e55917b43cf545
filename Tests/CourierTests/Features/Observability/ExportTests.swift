import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("cURL export")
struct CURLCommandTests {
    func request(_ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        return request
    }

    @Test func reproducesMethodHeadersAndBodyRedacted() throws {
        let command = CURLCommand(
            try request(
                "POST", "https://api.example.com/login?access_token=SECRET-Q",
                headers: ["Authorization": "Bearer SECRET-TOKEN", "Content-Type": "application/json"],
                body: #"{"user":"ann","password":"SECRET-PW"}"#))
        #expect(
            command.text == """
                curl -X 'POST' 'https://api.example.com/login?access_token=<redacted>' \\
                  -H 'Authorization: Bearer <redacted>' \\
                  -H 'Content-Type: application/json' \\
                  --data-raw '{"user":"ann","password":"<redacted>"}'
                """)
    }

    @Test func unredactedOnlyWhenAskedFor() throws {
        let original = try request("GET", "https://api.example.com/me", headers: ["Authorization": "Bearer SECRET-TOKEN"])
        #expect(
            CURLCommand(original, redactor: nil).text == """
                curl 'https://api.example.com/me' \\
                  -H 'Authorization: Bearer SECRET-TOKEN'
                """)
        #expect(!original.cURLCommand.contains("SECRET"))
    }

    @Test func singleQuotesAreEscapedForTheShell() throws {
        let command = CURLCommand(try request("PUT", "https://api.example.com/notes/1", body: "it's 'quoted'"))
        #expect(command.text.hasSuffix(#"--data-raw 'it'\''s '\''quoted'\'''"#))
        #expect(CURLCommand(try request("HEAD", "https://api.example.com/a")).text == "curl --head 'https://api.example.com/a'")
    }

    @Test func binaryBodiesUseANSICQuotingOrAreOmittedWhenRedacted() throws {
        var binary = try request("POST", "https://api.example.com/upload", headers: ["Content-Type": "image/png"])
        binary.httpBody = Data([0x89, 0x50, 0x27, 0x5C, 0x01])
        #expect(CURLCommand(binary, redactor: nil).text.hasSuffix(#"--data-raw $'\x89P\'\\\x01'"#))
        let redacted = CURLCommand(binary).text
        #expect(redacted.hasPrefix("# binary body of 5 bytes (image/png) omitted\ncurl -X 'POST'"))
        #expect(!redacted.contains("--data-"))
    }

    @Test func aBodyStartingWithAnAtSignIsSentAsTextNeverReadAsAFile() throws {
        let command = CURLCommand(
            try request(
                "POST", "https://api.example.com/notes", headers: ["Content-Type": "text/plain"],
                body: "@/home/dev/.ssh/id_rsa"),
            redactor: nil)
        #expect(command.text.hasSuffix("--data-raw '@/home/dev/.ssh/id_rsa'"))
        #expect(!command.text.contains("--data-binary '@"))
    }

    @Test func aBodyWithANULByteGoesThroughStandardInputWhole() throws {
        var binary = try request("POST", "https://api.example.com/upload", headers: ["Content-Type": "application/octet-stream"])
        binary.httpBody = Data([0x41, 0x00, 0x25, 0x27, 0x5C, 0xFF, 0x42])
        let text = CURLCommand(binary, redactor: nil).text
        #expect(text.hasPrefix(#"printf 'A\000%%'\''\\\377B' | curl -X 'POST'"#), "\(text)")
        #expect(text.hasSuffix("--data-binary @-"))
        #expect(!text.utf8.contains(0))
    }

    @Test func anEmptyHeaderValueIsSentNotRemoved() throws {
        let text = CURLCommand(try request("GET", "https://api.example.com/a", headers: ["X-Empty": ""])).text
        #expect(text.contains("-H 'X-Empty;'"), "\(text)")
    }

    @Test func aRecordBecomesACommand() throws {
        let snapshot = RequestRecord(
            requestID: RequestID(), method: "PATCH", pathTemplate: "/items/{id}", url: "https://api.example.com/items/1",
            headers: ["Authorization": "Bearer <redacted>"], body: .text(#"{"name":"Lamp"}"#, truncated: false),
            bodySize: 15, contentType: "application/json", attempt: 1, timestamp: Date())
        #expect(
            CURLCommand(snapshot).text == """
                curl -X 'PATCH' 'https://api.example.com/items/1' \\
                  -H 'Authorization: Bearer <redacted>' \\
                  --data-raw '{"name":"Lamp"}'
                """)
        var truncated = snapshot
        truncated.body = .text("{", truncated: true)
        #expect(CURLCommand(truncated).text.hasPrefix("# body of 15 bytes truncated in the record; omitted\n"))
    }
}

@Suite("HAR export")
struct HARExportTests {
    func exchanges() -> [NetworkExchange] {
        let start = Date(timeIntervalSince1970: 1_780_000_000.25)
        let id = RequestID()
        let request = RequestRecord(
            requestID: id, method: "POST", pathTemplate: "/login",
            url: "https://api.example.com/login?access_token=<redacted>&lang=en%20GB",
            headers: [("Cookie", "sid=<redacted>; theme=<redacted>"), ("Content-Type", "application/json")].reduce(
                into: HTTPHeaders()
            ) { $0.add($1.0, $1.1) },
            body: .text(#"{"password":"<redacted>"}"#, truncated: false), bodySize: 24,
            contentType: "application/json", attempt: 1, timestamp: start)
        let response = ResponseRecord(
            requestID: id, statusCode: 201, url: nil,
            headers: HTTPHeaders([
                .init(name: "Set-Cookie", value: "sid=<redacted>; Path=/; HttpOnly; Secure"),
                .init(name: "Content-Type", value: "application/json"),
            ]),
            body: .text(#"{"ok":true}"#, truncated: false), bodySize: 11, contentType: "application/json",
            duration: .milliseconds(42), attempt: 2)
        let failedRequest = RequestRecord(
            requestID: RequestID(), method: "GET", pathTemplate: "/items", url: "https://api.example.com/items",
            headers: HTTPHeaders(), body: nil, bodySize: 0, contentType: nil, attempt: 1, timestamp: start.addingTimeInterval(1))
        let failure = ErrorRecord(
            requestID: failedRequest.requestID, kind: "offline", domain: NSURLErrorDomain, code: -1009,
            message: "URLError -1009: offline", duration: .milliseconds(3), attempt: 1)
        return [
            NetworkExchange(request: failedRequest, outcome: .failure(failure)),
            NetworkExchange(request: request, outcome: .response(response), cacheOutcome: .miss),
        ]
    }

    @Test func theArchiveParsesWithEveryRequiredHAR12Field() throws {
        let data = try HARLog(exchanges: exchanges()).jsonData()
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let log = try #require(root["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let creator = try #require(log["creator"] as? [String: Any])
        #expect(creator["name"] is String && creator["version"] is String)
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        for entry in entries {
            #expect(entry["startedDateTime"] is String)
            #expect(entry["time"] is NSNumber)
            #expect(entry["cache"] is [String: Any])
            let request = try #require(entry["request"] as? [String: Any])
            for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
                #expect(request[key] != nil, "request.\(key) missing")
            }
            let response = try #require(entry["response"] as? [String: Any])
            for key in [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize",
            ] {
                #expect(response[key] != nil, "response.\(key) missing")
            }
            let content = try #require(response["content"] as? [String: Any])
            #expect(content["size"] is NSNumber && content["mimeType"] is String)
            let timings = try #require(entry["timings"] as? [String: Any])
            let phases = try ["send", "wait", "receive"].map { try #require(timings[$0] as? Double) }
            #expect(phases.allSatisfy { $0 >= 0 })
            let total = try #require(entry["time"] as? Double)
            let sum = ["blocked", "dns", "connect", "send", "wait", "receive"]
                .compactMap { timings[$0] as? Double }.filter { $0 >= 0 }.reduce(0, +)
            #expect(abs(total - sum) < 0.001, "time is the sum of the timings (HAR 1.2)")
        }
    }

    @Test func entriesCarryRedactedDetails() throws {
        let har = HARLog(exchanges: exchanges())
        #expect(har.log.entries.map(\.response.status) == [201, 0], "ordered by start time")
        #expect(har.log.entries.last?.response.error == "offline (-1009): URLError -1009: offline")
        let entry = try #require(har.log.entries.first)
        #expect(entry.startedDateTime == "2026-05-28T20:26:40.250Z")
        #expect(entry.time == 42)
        #expect(
            entry.request.queryString == [.init(name: "access_token", value: "<redacted>"), .init(name: "lang", value: "en GB")])
        #expect(entry.request.cookies.map(\.name) == ["sid", "theme"])
        #expect(entry.request.cookies.allSatisfy { $0.value == "<redacted>" })
        #expect(entry.request.postData?.text == #"{"password":"<redacted>"}"#)
        #expect(entry.response.status == 201)
        #expect(entry.response.statusText == "Created")
        #expect(entry.response.cookies.first?.name == "sid")
        #expect(entry.response.cookies.first?.httpOnly == true && entry.response.cookies.first?.secure == true)
        #expect(entry.response.content.text == #"{"ok":true}"#)
        #expect(entry.response.bodySize == 11)
        #expect(entry.attempts == 2)
        #expect(entry.cacheOutcome == "miss")
        #expect(entry.timings.wait == 42 && entry.timings.dns == -1 && entry.timings.send == 0)
    }

    @Test func theRecorderKeepsTheNewestEntriesAndWritesAFile() throws {
        let recorder = HARRecorder(maximumEntries: 1)
        for exchange in exchanges() { recorder.record(exchange) }
        #expect(recorder.exchanges.count == 1)
        #expect(recorder.exchanges.first?.response?.statusCode == 201)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: url) }
        try recorder.write(to: url)
        let decoded = try JSONDecoder().decode(HARLog.self, from: Data(contentsOf: url))
        #expect(decoded == recorder.archive())
        recorder.removeAll()
        #expect(recorder.exchanges.isEmpty)
    }
}

@Suite("HAR fixtures: bodies")
struct HARFixtureBodyTests {
    static func entry(body: String, contentType: String) -> HARLog.Entry {
        var request = URLRequest(url: URL(string: "https://api.example.test/v1/login")!)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        let exchange = HARLog.FixtureExchange(
            request: request, requestBody: Data(body.utf8), response: HTTPResponse(statusCode: 204), pathTemplate: "/login",
            requestID: nil, started: Date(), duration: .zero)
        return HARLog.fixtureEntry(for: exchange, redactor: Redactor())
    }

    @Test func aMultipartFormWithASecretFieldIsNotRecorded() {
        let body =
            "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nann\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\npwSECRET77\r\n--XyZ--\r\n"
        let entry = Self.entry(body: body, contentType: "multipart/form-data; boundary=XyZ")
        let text = entry.request.postData?.text ?? ""
        #expect(!String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self).contains("pwSECRET77"))
        #expect(!text.contains("pwSECRET77"))
    }

    @Test func aMultipartFormWithoutOneIsRecorded() {
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nsunset\r\n--XyZ--\r\n"
        let entry = Self.entry(body: body, contentType: "multipart/form-data; boundary=XyZ")
        let text = entry.request.postData?.text ?? ""
        #expect(String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self).contains("sunset"))
    }
}
