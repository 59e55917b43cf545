import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A `URLProtocol` that answers requests of one session configuration from a handler, for tests
/// that must exercise the real `URLRequest` → `URLSession` path (headers URLSession adds, cookie
/// handling, redirects).
///
/// It is installed per configuration, never globally (`URLProtocol.registerClass` is not used):
/// ```swift
/// let configuration = URLProtocolStub.configuration { request in .json(#"{"ok": true}"#) }
/// let client = APIClient(environment: env) { $0.transport = URLSessionTransport(configuration: configuration) }
/// ```
/// Each configuration gets its own handler, found through a private `X-Courier-Stub` header that
/// the configuration adds to every request (the header is removed before the handler sees the request).
///
/// Limits on Linux (swift-corelibs-foundation): the whole body is delivered in one `didLoad` call
/// because async callers only receive the last chunk; upload bodies from files or streams are not
/// visible to the handler; and downloads must not be stubbed this way (it crashes the process) —
/// use ``StubTransport`` for those.
public final class URLProtocolStub: URLProtocol {
    // Adds no stored mutable state: handlers live in the lock-protected registry.

    /// Produces the response (or throws the failure) for one request.
    public typealias Handler = @Sendable (URLRequest) throws -> HTTPResponse

    static let headerName = "X-Courier-Stub"
    private static let handlers = Locked<[String: Handler]>([:])

    /// A copy of `base` whose requests are answered by `handler`.
    ///
    /// - Parameters:
    ///   - base: The configuration to copy; Courier's default by default.
    ///   - handler: Called once per request; a thrown `URLError` becomes the task's error.
    public static func configuration(
        base: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
        handler: @escaping Handler
    ) -> URLSessionConfiguration {
        let id = UUID().uuidString
        handlers.withLock { $0[id] = handler }
        let configuration = base
        configuration.protocolClasses = [URLProtocolStub.self]
        var headers = configuration.httpAdditionalHeaders ?? [:]
        headers[headerName] = id
        configuration.httpAdditionalHeaders = headers
        return configuration
    }

    override public class func canInit(with request: URLRequest) -> Bool { true }

    override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override public func startLoading() {
        var request = self.request
        let id = request.value(forHTTPHeaderField: Self.headerName)
            ?? task?.currentRequest?.value(forHTTPHeaderField: Self.headerName)
        request.setValue(nil, forHTTPHeaderField: Self.headerName)
        if request.httpBody == nil, let stream = request.httpBodyStream {
            request.httpBody = Self.read(stream)
        }
        guard let id, let handler = Self.handlers.withLock({ $0[id] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        do {
            let response = try handler(request)
            guard let url = request.url,
                  let http = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                                             headerFields: response.headers.dictionary)
            else { throw URLError(.badServerResponse) }
            client?.urlProtocol(self, didReceive: http, cacheStoragePolicy: .notAllowed)
            if !response.body.isEmpty { client?.urlProtocol(self, didLoad: response.body) }
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
