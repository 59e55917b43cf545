import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier

/// A seeded generator (SplitMix64 over an LCG): the same inputs on every run.
struct FuzzRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58476d1ce4e5b9
        z = (z ^ (z >> 27)) &* 0x94d049bb133111eb
        return z ^ (z >> 31)
    }
}

/// Header-like text: pieces of real field values (dates, ranges, directives, extreme numbers) and random ASCII.
enum FuzzInput {
    static let pieces: [String] = [
        "bytes", " ", "=", "-", "/", "*", ",", ";", "\"", "\\", "0", "1", "9", "99999999999999999999999",
        "-99999999999999999999", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e308", "0x10",
        "max-age", "s-maxage", "no-cache", "private", "Bearer", "Basic", "realm", "error", "Digest", "nonce", "GMT", "Mon",
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Dec", "31", "60",
        "24:00:00", "99:99:99", "1601", "0000", "10000", "\u{0}", "\u{7f}", "é", "🙂", "\r\n", "\n", "\r", ":", "data", "id",
        "retry", "event", "expires", "Expires", "Domain", "Path", "Max-Age", "Secure", "HttpOnly", "SameSite", ".example.com",
        "eyJhbGciOiJIUzI1NiJ9", "eyJleHAiOjk5OTk5OTk5OTk5OTk5OTk5OTk5fQ", "eyJleHAiOjFlMzA4LCJpYXQiOi0xZTMwOH0", ".", "==",
        "client_max_window_bits", "server_max_window_bits", "permessage-deflate", "server_no_context_takeover", "8", "15", "16",
    ]

    static func string(_ random: inout FuzzRandom) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            if Bool.random(using: &random) {
                text += pieces.randomElement(using: &random) ?? ""
            } else {
                let scalar = UInt32.random(in: 0...0x7f, using: &random)
                text += String(UnicodeScalar(UInt8(scalar)))
            }
        }
        return text
    }
}

@Suite("Header values and bodies a hostile server sends never trap a parser") struct HostileHeaderValueTests {
    @Test("generated values (fixed seed; FUZZ_SEED and FUZZ_COUNT for more) through every header parser of the core")
    func coreParsersNeverTrap() {
        var random = FuzzRandom(state: UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap(UInt64.init) ?? 1))
        let url = URL(string: "https://api.example.com/a/b")!
        let count = Int(ProcessInfo.processInfo.environment["FUZZ_COUNT"] ?? "") ?? 3000
        for _ in 0..<count {
            let text = FuzzInput.string(&random)
            _ = HTTPDate.parse(text)
            _ = StrictHTTPDate.parse(text)
            _ = CookieDate.parse(text)
            _ = SetCookieParser.cookie(from: text, receivedFrom: url, at: Date())
            _ = AuthenticationChallenge.parse(text)
            _ = CacheControl(text)
            _ = RetryAfter(headerValue: text)
            _ = JSONWebToken.claims(of: text)
            _ = JSONWebToken.claims(of: text + "." + FuzzInput.string(&random) + "." + text)
            _ = ByteRange(text)
            _ = Freshness.deltaSeconds(text)
            _ = HeaderScanning.date(text)
            _ = ErrorBodyParser.displayable(text)
            _ = ErrorBodyParser.parse(
                HTTPResponse(statusCode: 500, headers: ["Content-Type": "application/json"], body: Data(text.utf8), url: url))
            _ = ErrorBodyParser.parse(
                HTTPResponse(
                    statusCode: 400, headers: ["Content-Type": "application/problem+json"],
                    body: Data(("{\"title\":" + text + "}").utf8), url: url))
            var headers = HTTPHeaders()
            headers.add("Content-Range", text)
            _ = ContentRange(headers)
            _ = RetryAfter(response: HTTPResponse(statusCode: 503, headers: ["Retry-After": text], body: Data(), url: url))
        }
    }
}
