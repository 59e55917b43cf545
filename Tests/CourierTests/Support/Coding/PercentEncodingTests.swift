import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct PercentEncodingTests {
        @Test(arguments: [
            ("a b/c?d#e%f", "a%20b%2Fc%3Fd%23e%25f"),
            ("plain-segment_1.2~x", "plain-segment_1.2~x"),
            ("user@host:8080", "user@host:8080"),
            ("!$&'()*,=", "!$&'()*,="),
            ("a+b;c", "a%2Bb%3Bc"),
            ("[x]", "%5Bx%5D"),
            ("naïve", "na%C3%AFve"),
            ("", ""),
        ])
        func pathSegments(input: String, expected: String) {
            #expect(PercentEncoding.encodePathSegment(input) == expected)
        }

        @Test(arguments: [
            ("user+tag@example.com", "user%2Btag%40example.com"),
            ("a&b=c#d", "a%26b%3Dc%23d"),
            ("x y", "x%20y"),
            ("[]/?:,;!*'()$", "%5B%5D%2F%3F%3A%2C%3B%21%2A%27%28%29%24"),
            ("100%", "100%25"),
            ("AZaz09-._~", "AZaz09-._~"),
            ("😀", "%F0%9F%98%80"),
        ])
        func queryComponents(input: String, expected: String) {
            #expect(PercentEncoding.encodeQueryComponent(input) == expected)
        }

        @Test func queryFromItems() {
            let items = [
                URLQueryItem(name: "email", value: "user+tag@example.com"),
                URLQueryItem(name: "flag", value: nil),
                URLQueryItem(name: "empty", value: ""),
                URLQueryItem(name: "k[]", value: "a b"),
            ]
            let expected = "email=user%2Btag%40example.com&flag&empty=&k%5B%5D=a%20b"
            #expect(PercentEncoding.query(from: items) == expected)
            #expect(PercentEncoding.query(from: items) == PercentEncoding.query(from: items))
            #expect(PercentEncoding.query(from: []) == "")
        }

        @Test func encodedComponentsDecodeBackWithFoundation() {
            let original = "a+b c&d=e#f/g?h%i☕"
            #expect(PercentEncoding.encodeQueryComponent(original).removingPercentEncoding == original)
            #expect(PercentEncoding.encodePathSegment(original).removingPercentEncoding == original)
        }
    }
}
