import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a ``PersistentCookieStorage`` could not read or write its file. The file is never replaced
/// or deleted because of such an error (no silent loss): fix the cause, or drop the account's
/// cookies with ``PersistentCookieStorage/removeAll(account:)`` (``APIClient/resetSession(also:)``
/// does it too).
///
/// A call through a ``CookieStoringTransport`` whose cookies cannot be read fails with
/// ``NetworkError/transport(_:)`` carrying it, before its request is sent: read it with
/// ``NetworkError/cookieStorageError``. A response whose cookies cannot be written is still
/// delivered; ``PersistentCookieStorage/unsavedChanges(account:)`` reports the failure.
public enum CookieStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The cookie file exists but could not be read (permissions, I/O error, data protection
    /// while the device is locked).
    case unreadable(path: String, reason: String)
    /// The cookie file holds something other than Courier's cookie format (truncated, edited, or
    /// written by a newer version).
    case corrupted(path: String, reason: String)
    /// The cookie file could not be written or removed (disk full, permissions).
    case unwritable(path: String, reason: String)
    /// The transport under a ``CookieStoringTransport`` stores and sends cookies itself, so every
    /// cookie would be handled twice: give it a configuration with cookies off.
    case baseTransportHandlesCookies(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cookie file \(path) could not be read: \(reason)"
        case .corrupted(let path, let reason): return "cookie file \(path) is corrupted: \(reason)"
        case .unwritable(let path, let reason): return "cookie file \(path) could not be written: \(reason)"
        case .baseTransportHandlesCookies(let transport):
            return "\(transport) handles cookies itself; turn its cookies off under a CookieStoringTransport "
                + "(a URLSessionTransport, also a PinningTransport's base, built with CookieStoringTransport.baseConfiguration())"
        }
    }
}

extension CookieStorageError: URLErrorPayload {
    /// `cannotOpenFile` for a file that cannot be read, `cannotWriteToFile` for one that cannot be
    /// written, `unsupportedURL` for a base transport that handles cookies itself.
    package var urlErrorCode: URLError.Code {
        switch self {
        case .unreadable, .corrupted: .cannotOpenFile
        case .unwritable: .cannotWriteToFile
        case .baseTransportHandlesCookies: .unsupportedURL
        }
    }

    /// The `URLError.userInfo` key under which the error travels.
    package static let userInfoKey = "CourierCookieStorageError"
}

extension URLError {
    /// The cookie-storage failure behind this error, when a ``CookieStoringTransport`` failed.
    public var cookieStorageError: CookieStorageError? { payload(CookieStorageError.self) }
}

extension NetworkError {
    /// The cookie-storage failure behind this error (always inside ``NetworkError/transport(_:)``).
    public var cookieStorageError: CookieStorageError? { payload(CookieStorageError.self) }
}
