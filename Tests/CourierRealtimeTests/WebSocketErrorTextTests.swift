import Foundation
import Testing
@testable import CourierRealtime

/// An error's text never shows the credentials a WebSocket URL carries (query tokens, user and
/// password), so an app that logs `state` or `lastFailure` leaks nothing; the case keeps the URL.
@Suite("WebSocket error texts hide the URL's credentials")
struct WebSocketErrorTextTests {
    @Test(
        "the query, user and password are left out of the text",
        arguments: [
            ("http://user:SECRET-PASS@api.example.com/live?access_token=SECRET-TOKEN#frag", "http://api.example.com/live?…"),
            ("wss://api.example.com/live?token=SECRET-TOKEN", "wss://api.example.com/live?…"),
            ("wss://api.example.com/live", "wss://api.example.com/live"),
        ])
    func credentialsLeftOut(url: String, shown: String) {
        let invalid = WebSocketError.invalidURL(url)
        let redirected = WebSocketError.handshakeRedirected(status: 302, location: url)
        for error in [invalid, redirected] {
            #expect(error.description.contains(shown))
            #expect(!error.description.contains("SECRET"))
        }
        #expect(invalid == .invalidURL(url), "the case keeps the whole URL for the app")
    }

    @Test("a string that is no URL but carries a query or user is not shown")
    func unparseableWithCredentials() {
        let error = WebSocketError.invalidURL("not a url?token=SECRET-TOKEN")
        #expect(!error.description.contains("SECRET"))
    }
}
