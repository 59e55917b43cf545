import Courier
import Foundation

/// An endpoint that is another one, `base`, with a few of its requirements changed: a download
/// attempt's range fields, a feed connection's `Accept` and `Last-Event-ID`. Every requirement of
/// ``Courier/Endpoint`` is forwarded to `base` here, once; a conforming type declares only the
/// ones it changes. (Forwarding by hand in each wrapper would let a forgotten requirement fall
/// back to `Endpoint`'s default without a word, dropping the base's value.)
protocol WrappedEndpoint: Endpoint where Response == Base.Response {
    /// The type of ``base``.
    associatedtype Base: Endpoint
    /// The endpoint this one changes.
    var base: Base { get }
}

extension WrappedEndpoint {
    var path: String { base.path }
    var pathValues: [String: String] { base.pathValues }
    var method: HTTPMethod { base.method }
    var query: Query { base.query }
    var headers: HTTPHeaders { base.headers }
    var body: RequestBody { base.body }
    var policy: EndpointPolicy { base.policy }
    var statusValidation: StatusValidation { base.statusValidation }
    var knownErrors: [Int: String] { base.knownErrors }
    var pathTemplate: String? { base.pathTemplate }
    var options: RequestOptions { base.options }

    func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> Base.Response {
        try base.decode(response, context: context)
    }
}
