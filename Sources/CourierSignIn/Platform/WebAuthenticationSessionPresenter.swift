#if canImport(AuthenticationServices) && !os(watchOS) && !os(tvOS)
import AuthenticationServices
import Courier
import Foundation

/// Presents the authorization page with `ASWebAuthenticationSession` (Apple platforms): the
/// system browser sheet RFC 8252 asks native apps to use, sharing Safari's cookies unless
/// `prefersEphemeralWebBrowserSession` is set.
public struct WebAuthenticationSessionPresenter: AuthorizationPresenting {
    /// Returns the window the sheet is shown over.
    public let anchor: @MainActor @Sendable () -> ASPresentationAnchor
    /// Whether the session shares no cookies or website data with Safari.
    public let prefersEphemeralWebBrowserSession: Bool

    /// Creates a presenter that shows the sheet over the window `anchor` returns.
    public init(
        prefersEphemeralWebBrowserSession: Bool = false,
        anchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor
    ) {
        self.anchor = anchor
        self.prefersEphemeralWebBrowserSession = prefersEphemeralWebBrowserSession
    }

    /// Shows `url` and returns the callback URL.
    ///
    /// - Throws: ``AuthorizationCodeError/cancelled`` when the user closed the sheet or the
    ///   session could not start; the session's error otherwise.
    public func present(_ url: URL, callbackScheme: String) async throws -> URL {
        try await Self.run(url, callbackScheme, prefersEphemeralWebBrowserSession, anchor)
    }

    @MainActor
    private static func run(
        _ url: URL, _ callbackScheme: String, _ ephemeral: Bool, _ anchor: @MainActor @Sendable () -> ASPresentationAnchor
    ) async throws -> URL {
        let provider = AnchorProvider(anchor: anchor())
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
            // Resumed once: by the completion handler, or here when the session does not start.
            let pending = Locked<CheckedContinuation<URL, any Error>?>(continuation)
            let finish: @Sendable (Result<URL, any Error>) -> Void = { result in
                pending.withLock { current -> CheckedContinuation<URL, any Error>? in
                    defer { current = nil }
                    return current
                }?.resume(with: result)
            }
            let session = ASWebAuthenticationSession(url: url, callbackURLScheme: callbackScheme) { callbackURL, error in
                if let callbackURL {
                    finish(.success(callbackURL))
                } else if let error, (error as? ASWebAuthenticationSessionError)?.code != .canceledLogin {
                    finish(.failure(error))
                } else {
                    finish(.failure(AuthorizationCodeError.cancelled))
                }
                withExtendedLifetime(provider) {}
            }
            session.presentationContextProvider = provider
            session.prefersEphemeralWebBrowserSession = ephemeral
            if !session.start() {
                finish(.failure(AuthorizationCodeError.cancelled))
            }
        }
    }
}

/// Supplies the window; kept alive by the completion handler (the session holds it weakly).
private final class AnchorProvider: NSObject, ASWebAuthenticationPresentationContextProviding, @unchecked Sendable {
    // @unchecked: created, read and released on the main actor only (the session calls it there).
    private let anchor: ASPresentationAnchor

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        anchor
    }
}
#endif
