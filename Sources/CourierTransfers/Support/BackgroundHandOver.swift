import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the upload manager and background downloads share when they hand a transfer to a
/// ``BackgroundTransport``: the request built from a record, and who may sign it. A background
/// session runs no interceptors, so both rules are applied here, once, before the hand-over.
enum BackgroundHandOver {
    /// The request for a recorded transfer: `url`, `method` (`GET` when `nil`) and the record's
    /// header fields.
    static func request(to url: URL, method: String? = nil, headers: [String: String]) -> URLRequest {
        var request = URLRequest(url: url)
        if let method { request.httpMethod = method }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// The token manager that signs a transfer to `url`: `tokenManager` when `url` is on one of the
    /// client's environment's origins, as in the pipeline (a CDN, storage or presigned link gets no
    /// token); `nil` otherwise.
    ///
    /// - Throws: `NetworkError.invalidRequest(_:)` when `tokenManager` is not the one the current
    ///   environment authenticates with (see `APIClient.checkSigning(with:)`).
    static func signer(_ tokenManager: TokenManager?, for url: URL, client: APIClient) throws -> TokenManager? {
        guard let tokenManager, client.environment.isOrigin(of: url) else { return nil }
        try client.checkSigning(with: tokenManager)
        return tokenManager
    }
}
