import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error a transport throws wrapped in a `URLError`, so that it passes through code that knows
/// only URLSession's errors and reaches the caller inside ``NetworkError/transport(_:)``. The
/// `URLError` has the code ``urlErrorCode``, the error's description under
/// `NSLocalizedDescriptionKey`, and the error itself under ``userInfoKey``.
package protocol URLErrorPayload: Error, CustomStringConvertible {
    /// The `URLError.userInfo` key under which the error travels.
    static var userInfoKey: String { get }
    /// The `URLError` code the error is thrown with.
    var urlErrorCode: URLError.Code { get }
}

extension URLErrorPayload {
    /// The `URLError` a transport throws for this error, carrying it in `userInfo`.
    package var urlError: URLError {
        URLError(urlErrorCode, userInfo: [NSLocalizedDescriptionKey: description, Self.userInfoKey: self])
    }
}

extension URLError {
    /// The `Payload` this error carries in its `userInfo`; `nil` when it carries none.
    package func payload<Payload: URLErrorPayload>(_: Payload.Type) -> Payload? {
        userInfo[Payload.userInfoKey] as? Payload
    }
}

extension NetworkError {
    /// The `Payload` carried by the `URLError` of a ``NetworkError/transport(_:)``; `nil` for any
    /// other case or a `URLError` that carries none.
    package func payload<Payload: URLErrorPayload>(_: Payload.Type) -> Payload? {
        if case .transport(let error) = self { return error.payload(Payload.self) }
        return nil
    }
}
