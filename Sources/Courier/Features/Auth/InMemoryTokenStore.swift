import Foundation

/// A ``TokenStore`` that keeps the tokens in memory only: for tests, previews and sessions that
/// must end with the process.
public final class InMemoryTokenStore: TokenStore {
    private let tokens: Locked<AuthTokens?>

    /// Creates a store, optionally already signed in with `tokens`.
    public init(_ tokens: AuthTokens? = nil) {
        self.tokens = Locked(tokens)
    }

    public func read() -> AuthTokens? { tokens.current }

    public func write(_ tokens: AuthTokens) { self.tokens.set(tokens) }

    public func clear() { tokens.set(nil) }
}

extension InMemoryTokenStore {
    /// This store object.
    public var storageIdentity: SessionStateIdentity? {
        SessionStateIdentity("token-memory", object: self, label: "one InMemoryTokenStore")
    }
}
