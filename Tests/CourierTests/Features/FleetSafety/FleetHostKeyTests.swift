import Foundation
import Testing

@testable import Courier

/// The fleet rules key their state by `host:port`; the fast reading of a URL's text must give
/// exactly what URL's own host and port give, and leave every unusual authority to URL.
@Suite struct FleetHostKeyTests {
    /// What the key was before the fast path: URL's lower-cased host, then its explicit port.
    private func parsedKey(_ url: URL) -> String {
        guard let host = url.host?.lowercased() else { return "" }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    @Test(arguments: [
        "https://api.example.com/v1/items",
        "https://API.Example.COM/v1/items?x=1",
        "http://127.0.0.1:8080/items",
        "http://localhost:08080",
        "https://api.example.com:443/",
        "https://api.example.com?query",
        "https://api.example.com#fragment",
        "http://my-host_name.example~/path",
        "https://user:secret@api.example.com/",
        "http://[::1]:8080/items",
        "https://b%C3%BCcher.example/",
        "https://api.example.com:/items",
        "ftp://files.example.com/a",
    ])
    func fastKeyMatchesURLParsing(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(FleetGuard.hostKey(of: url) == parsedKey(url))
    }

    @Test func unusualAuthoritiesAreLeftToURL() {
        #expect(FleetGuard.plainHostKey(of: "https://user@api.example.com/") == nil)
        #expect(FleetGuard.plainHostKey(of: "http://[::1]:8080/") == nil)
        #expect(FleetGuard.plainHostKey(of: "https://b%C3%BCcher.example/") == nil)
        #expect(FleetGuard.plainHostKey(of: "https://api.example.com:/") == nil)
        #expect(FleetGuard.plainHostKey(of: "ftp://files.example.com/") == nil)
        #expect(FleetGuard.plainHostKey(of: "https://API.example.com:8443/x") == "api.example.com:8443")
        #expect(FleetGuard.plainHostKey(of: "http://localhost:0") == "localhost:0")
        #expect(FleetGuard.plainHostKey(of: "http://localhost:080/") == nil, "a leading zero: URL reads the number")
        #expect(FleetGuard.plainHostKey(of: "http://localhost:65536/") == nil)
        #expect(FleetGuard.plainHostKey(of: "http://localhost:1:2/") == nil)
        #expect(FleetGuard.plainHostKey(of: "http://:8080/") == nil)
        #expect(FleetGuard.plainHostKey(of: "http://") == nil)
    }
}
