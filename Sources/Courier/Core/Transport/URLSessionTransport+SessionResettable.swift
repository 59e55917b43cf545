import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport: SessionResettable {
    /// Forgets the account's transport-level state: deletes every cookie in the session's own
    /// cookie storage and every credential in its credential storage, then resets the session
    /// (`URLSession.reset`), which also empties its caches and makes later requests use new
    /// connections. Never touches `HTTPCookieStorage.shared`.
    public func resetSession() async {
        if let cookies = cookieStorage {
            for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) }
        }
        if let credentials = session.configuration.urlCredentialStorage {
            for (space, byUser) in credentials.allCredentials {
                for credential in byUser.values { credentials.remove(credential, for: space) }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.reset { continuation.resume() }
        }
    }

    /// ``SessionResetStage/connections``.
    public var sessionResetStage: SessionResetStage { .connections }

    /// The URLSession and its cookie storage.
    public var sessionStateIdentities: [SessionStateIdentity] {
        var identities = [SessionStateIdentity("session", object: session, label: "one URLSession")]
        if let cookieStorage {
            identities.append(SessionStateIdentity("cookies", object: cookieStorage, label: "one cookie storage"))
        }
        return identities
    }
}
