import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Per-request tuning on top of the client's configuration: change the built `URLRequest`, or
/// decode/encode this one call differently (a legacy endpoint with snake_case keys, a custom date
/// format).
public struct RequestOptions: Sendable {
    /// Runs last on the built `URLRequest`, before the pipeline (e.g. set `allowsCellularAccess`,
    /// `networkServiceType`, a header computed at call time).
    public var modifyRequest: (@Sendable (inout URLRequest) -> Void)?
    /// Decoder for this call instead of the client's.
    public var decoder: JSONDecoder?
    /// Encoder for this call's JSON body instead of the client's.
    public var encoder: JSONEncoder?

    /// Creates options; everything defaults to "use the client's".
    public init(
        modifyRequest: (@Sendable (inout URLRequest) -> Void)? = nil,
        decoder: JSONDecoder? = nil,
        encoder: JSONEncoder? = nil
    ) {
        self.modifyRequest = modifyRequest
        self.decoder = decoder
        self.encoder = encoder
    }

    /// Options that change nothing.
    public static let none = RequestOptions()
}
