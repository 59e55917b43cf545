import Foundation

/// What happened to the signed-in session, published by ``TokenManager/events()``.
///
/// ```swift
/// for await event in tokenManager.events() {
///     if case .sessionExpired = event { router.showSignIn() }
/// }
/// ```
/// Events carry no token values.
public enum SessionEvent: Sendable, Hashable, CustomStringConvertible {
    /// New tokens were stored by ``TokenManager/signIn(_:)``.
    case signedIn
    /// A refresh succeeded and the new tokens are in use.
    case refreshed
    /// The refresh token was refused (or none was stored): the tokens were cleared and every
    /// waiting request failed with ``NetworkError/sessionExpired``. Route the user to sign-in.
    case sessionExpired(TokenRefreshRejection)
    /// ``TokenManager/signOut()`` cleared the tokens.
    case signedOut
    /// The ``TokenStore`` failed: refreshed tokens could not be saved (they are used from memory
    /// for this process and written again by the next call that needs a token, until a write
    /// succeeds; a launch before that finds the previous, possibly already rotated, ones), an
    /// ended session could not be cleared, or the store could not be read after the token
    /// endpoint refused the refresh token.
    case storeFailed(TokenStoreError)

    public var description: String {
        switch self {
        case .signedIn: return "signed in"
        case .refreshed: return "tokens refreshed"
        case .sessionExpired(let rejection): return "session expired (\(rejection))"
        case .signedOut: return "signed out"
        case .storeFailed(let error): return "token store failed: \(error)"
        }
    }
}

/// Fans events out to any number of `AsyncStream` subscribers. Each subscriber keeps the newest
/// `bufferSize` events it has not consumed yet; a finished or cancelled stream unsubscribes itself.
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private let subscribers = Locked<[UUID: AsyncStream<Event>.Continuation]>([:])
    private let bufferSize: Int

    package init(bufferSize: Int = 32) {
        self.bufferSize = bufferSize
    }

    /// A new stream receiving every event published from now on.
    package func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(bufferSize))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `event` to every current subscriber.
    package func publish(_ event: Event) {
        for continuation in subscribers.withLock({ Array($0.values) }) {
            continuation.yield(event)
        }
    }

    /// Ends every stream.
    package func finish() {
        for continuation in subscribers.withLock({ state in
            defer { state.removeAll() }
            return Array(state.values)
        }) {
            continuation.finish()
        }
    }
}
