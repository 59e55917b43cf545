import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` that keeps cookies in a ``PersistentCookieStorage`` on top of another
/// transport, so they survive relaunch — the same way on every transport (URLSession on Apple
/// platforms and Linux, `CurlTransport`).
///
/// Before each send it adds the matching cookies to the request's `Cookie` field (after any the
/// request already has); after it, it stores the response's `Set-Cookie` fields. It sits under the
/// client's redirect step, so every hop of a redirect chain sends and stores its own host's
/// cookies. The account is read once per send, so a response is stored in the account its request
/// was sent for.
///
/// The base transport must not handle cookies itself (else each would be stored and sent twice):
/// the default base is a ``URLSessionTransport`` with cookies off (``baseConfiguration()``); for
/// `CurlTransport` set `httpShouldSetCookies = false`. A ``URLSessionTransport`` base whose session
/// handles cookies fails every call with ``CookieStorageError/baseTransportHandlesCookies(_:)``.
///
/// ```swift
/// let storage = PersistentCookieStorage(directory: appSupport.appendingPathComponent("Cookies"),
///                                       namespace: environment.storageNamespace)
/// let client = APIClient(environment: environment) { $0.transport = CookieStoringTransport(storage: storage) }
/// ```
public struct CookieStoringTransport: Transport {
    /// Where the cookies live.
    public let storage: PersistentCookieStorage
    /// The transport that sends the requests.
    public let base: any Transport

    /// Creates the transport.
    ///
    /// - Parameters:
    ///   - storage: The cookie storage (one per environment).
    ///   - base: The transport underneath, with its own cookie handling off; a
    ///     ``URLSessionTransport`` with ``baseConfiguration()`` by default.
    public init(
        storage: PersistentCookieStorage,
        base: any Transport = URLSessionTransport(configuration: CookieStoringTransport.baseConfiguration())
    ) {
        self.storage = storage
        self.base = base
    }

    /// ``URLSessionTransport/defaultConfiguration()`` with cookies off: no cookie storage, none
    /// sent or accepted by URLSession.
    public static func baseConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionTransport.defaultConfiguration()
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return configuration
    }

    /// Sends `request` with its cookies and stores the response's.
    ///
    /// - Throws: A `URLError` carrying a ``CookieStorageError`` when the storage fails before the
    ///   request is sent (a file that cannot be read or is corrupted); otherwise whatever the base
    ///   transport throws. The response's cookies failing to be written does not fail the call
    ///   (see ``PersistentCookieStorage/unsavedChanges(account:)``).
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try await exchange(request) { try await base.send($0) }
    }

    /// Streams `request` with its cookies and stores the response head's (see ``send(_:)``).
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        try await exchange(request) { try await base.stream($0, options: options) }
    }

    private func exchange(
        _ request: URLRequest, _ send: (URLRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        do {
            if let handler = base as? any CookieHandlingTransport, handler.handlesCookies {
                throw CookieStorageError.baseTransportHandlesCookies(String(describing: type(of: base)))
            }
            guard let url = request.url else { return try await send(request) }
            let account = storage.currentAccount
            var request = request
            let (header, sentAt) = try await storage.cookieHeader(for: url, account: account)
            if let header {
                let existing = request.value(forHTTPHeaderField: "Cookie").map { $0 + "; " } ?? ""
                request.setValue(existing + header, forHTTPHeaderField: "Cookie")
            }
            let response = try await send(request)
            do {
                try await storage.store(
                    setCookieFields: response.headers.values(for: "Set-Cookie"), receivedFrom: response.url ?? url,
                    account: account, sentAt: sentAt)
            } catch is CookieStorageError {
                // The server has answered, and may have acted on the request: failing the call now
                // would invite the app to send it again. A write failure stays readable through
                // `storage.unsavedChanges(account:)` (the cookies are used from memory and written
                // on a later request); a file that cannot be read fails the next request before it
                // is sent.
            }
            return response
        } catch let error as CookieStorageError {
            throw error.urlError
        }
    }
}

/// A transport that can store and send cookies itself (so it must not run under a
/// ``CookieStoringTransport`` unless that is off): ``URLSessionTransport`` with a cookie storage and
/// `httpShouldSetCookies`, `CurlTransport` with its cookie engine on.
package protocol CookieHandlingTransport: Transport {
    /// Whether this transport stores `Set-Cookie` and sends `Cookie` fields itself.
    var handlesCookies: Bool { get }
}

extension CookieStoringTransport: SessionResettable {
    /// Deletes the current account's cookies (memory and file), then resets the base transport
    /// when it is ``SessionResettable`` (its connections).
    ///
    /// - Throws: ``CookieStorageError/unwritable(path:reason:)`` when the file cannot be removed.
    public func resetSession() async throws {
        var failure: (any Error)?
        do { try await storage.removeAll() } catch { failure = error }
        if let base = base as? any SessionResettable { try await base.resetSession() }
        if let failure { throw failure }
    }

    /// ``SessionResetStage/connections``.
    public var sessionResetStage: SessionResetStage { .connections }

    /// The storage's namespace folder and the base transport's state.
    public var sessionStateIdentities: [SessionStateIdentity] {
        let folder = storage.fileURL(account: "").deletingLastPathComponent().standardizedFileURL.path
        // Lower-cased like token files: `Shared` and `shared` are one folder on a case-insensitive
        // disk (APFS and HFS+ by default).
        let own = SessionStateIdentity(
            key: "cookie-files:\(folder.lowercased())", label: "one cookie folder (\(storage.namespace))")
        return [own] + ((base as? any SessionResettable)?.sessionStateIdentities ?? [])
    }
}

extension PinningTransport: CookieHandlingTransport {
    /// Whether its base session stores and sends cookies itself (the default base does: build it
    /// with ``CookieStoringTransport/baseConfiguration()`` under a ``CookieStoringTransport``).
    package var handlesCookies: Bool { base.handlesCookies }
}

extension URLSessionTransport: CookieHandlingTransport {
    /// Whether the session stores and sends cookies itself: its configuration sets cookies and has
    /// a cookie storage.
    package var handlesCookies: Bool { session.configuration.httpShouldSetCookies && cookieStorage != nil }
}
