import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `URLProtocol` that answers requests of one session configuration from a handler, for tests
/// that must exercise the real `URLRequest` → `URLSession` path (headers URLSession adds,
/// redirects).
///
/// It is installed per configuration, never globally (`URLProtocol.registerClass` is not used):
/// ```swift
/// let configuration = URLProtocolStub.configuration { request in .json(#"{"ok": true}"#) }
/// let client = APIClient(environment: env) { $0.transport = URLSessionTransport(configuration: configuration) }
/// ```
/// Each configuration gets its own handler. It is found through the protocol class itself: every
/// configuration installs its own subclass of `URLProtocolStub` (a distinct specialisation of a
/// private generic subclass), so no marker travels with the request. A header added through
/// `httpAdditionalHeaders` cannot serve as the marker: on Linux those headers are merged by the
/// libcurl layer and are never visible to a `URLProtocol`.
///
/// Limits on Linux (swift-corelibs-foundation): the whole body is delivered in one `didLoad` call
/// because async callers only receive the last chunk; upload bodies from files or streams are not
/// visible to the handler; downloads must not be stubbed this way (it crashes the process) —
/// use ``StubTransport`` for those; and the session's cookie storage is neither filled from a
/// stubbed `Set-Cookie` nor applied to the next request (a `URLProtocol` does its own cookie
/// work) — test cookies with `CookieStoringTransport` over a ``StubTransport``.
public class URLProtocolStub: URLProtocol {
    // Adds no stored mutable state: handlers live in the lock-protected registry.

    /// Produces the response (or throws the failure) for one request.
    public typealias Handler = @Sendable (URLRequest) throws -> HTTPResponse

    /// Handlers by configuration number (see ``StubClassTag``).
    private static let handlers = Locked<[Int: Handler]>([:])
    private static let configurationCount = Locked(0)

    /// The configuration number whose handler answers; `0` (no handler) for the base class.
    class var configurationNumber: Int { 0 }

    /// A copy of `base` whose requests are answered by `handler`.
    ///
    /// - Parameters:
    ///   - base: The configuration to copy; Courier's default by default.
    ///   - handler: Called once per request; a thrown `URLError` becomes the task's error.
    public static func configuration(
        base: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
        handler: @escaping Handler
    ) -> URLSessionConfiguration {
        let number = configurationCount.withLock { count in
            count += 1
            return count
        }
        handlers.withLock { $0[number] = handler }
        let configuration = base
        configuration.protocolClasses = [StubClassTag.protocolClass(for: number)]
        return configuration
    }

    override public class func canInit(with request: URLRequest) -> Bool { true }

    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override public func startLoading() {
        var request = self.request
        if request.httpBody == nil, let stream = request.httpBodyStream {
            request.httpBody = URLProtocolStub.read(stream)
        }
        let number = type(of: self).configurationNumber
        guard let handler = URLProtocolStub.handlers.withLock({ $0[number] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        do {
            let response = try handler(request)
            guard let url = request.url,
                let http = HTTPURLResponse(
                    url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                    headerFields: response.headers.dictionary)
            else { throw URLError(.badServerResponse) }
            client?.urlProtocol(self, didReceive: http, cacheStoragePolicy: .notAllowed)
            if !response.data.isEmpty { client?.urlProtocol(self, didLoad: response.data) }
            client?.urlProtocolDidFinishLoading(self)
        } catch {
            client?.urlProtocol(self, didFailWithError: error)
        }
    }

    override public func stopLoading() {}

    private static func read(_ stream: InputStream) -> Data {
        var data = Data()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

/// Gives every stub configuration its own `URLProtocol` class without the Objective-C runtime: the
/// configuration number is spelled in binary as a generic type, most significant bit innermost
/// (`One<Zero<Root>>` is 0b101 = 5), and `TaggedURLProtocolStub<Tag>` is then a distinct class that
/// knows its number. The Swift runtime
/// instantiates such metadata on demand, so any number of configurations can coexist.
enum StubClassTag {
    protocol Digits { static var value: Int { get } }
    enum Root: Digits { static var value: Int { 1 } }
    enum Zero<Rest: Digits>: Digits { static var value: Int { Rest.value * 2 } }
    enum One<Rest: Digits>: Digits { static var value: Int { Rest.value * 2 + 1 } }

    /// The stub subclass for configuration `number` (at least 1).
    static func protocolClass(for number: Int) -> URLProtocolStub.Type {
        var bits: [Bool] = []
        var remaining = max(1, number)
        while remaining > 1 {
            bits.append(remaining & 1 == 1)
            remaining >>= 1
        }
        return build(Root.self, bits: bits.reversed()[...])
    }

    private static func build<Tag: Digits>(_ tag: Tag.Type, bits: ArraySlice<Bool>) -> URLProtocolStub.Type {
        guard let bit = bits.first else { return TaggedURLProtocolStub<Tag>.self }
        return bit ? build(One<Tag>.self, bits: bits.dropFirst()) : build(Zero<Tag>.self, bits: bits.dropFirst())
    }
}

/// The per-configuration stub class; see ``StubClassTag``.
final class TaggedURLProtocolStub<Tag: StubClassTag.Digits>: URLProtocolStub {
    override class var configurationNumber: Int { Tag.value }
}
