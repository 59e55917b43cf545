import Courier
import Foundation

/// A canned response an endpoint declares for SwiftUI previews, UI tests and demos — served by
/// CourierTesting's `SampleTransport`, never by a real transport.
///
/// ```swift
/// struct GetLamp: SampleResponseProviding {
///     typealias Response = Item
///     var path: String { "/items/42" }
///     var sampleResponses: [SampleResponse] {
///         [.json(#"{"id": 42, "name": "Lamp"}"#), .status(404, name: "missing")]
///     }
/// }
/// ```
public struct SampleResponse: Sendable, Hashable {
    /// A name to pick this sample by (`SampleBehavior.sample(named:)`); `default` unless given.
    public var name: String
    /// The status code (RFC 9110 §15).
    public var statusCode: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: Data

    /// Creates a sample.
    ///
    /// - Parameters:
    ///   - name: The name to pick it by.
    ///   - statusCode: The status code; 200 by default.
    ///   - headers: The header fields; none by default.
    ///   - body: The body bytes; none by default.
    public init(name: String = "default", statusCode: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.name = name
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// A JSON sample: `text` as the body, `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, name: String = "default") -> SampleResponse {
        SampleResponse(name: name, statusCode: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    /// A sample with a status and no body (a 204, or an error status such as 404 or 503).
    public static func status(_ statusCode: Int, name: String) -> SampleResponse {
        SampleResponse(name: name, statusCode: statusCode)
    }
}

/// An endpoint that declares sample responses (Moya's `sampleData`, with several named samples):
/// the first one is the default.
public protocol SampleResponseProviding: Endpoint {
    /// The samples, the default first.
    var sampleResponses: [SampleResponse] { get }
}
