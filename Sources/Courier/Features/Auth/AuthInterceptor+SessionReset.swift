/// Logout through ``APIClient/resetSession(also:)`` signs the user out: the token store is
/// cleared, waiting requests end with ``NetworkError/cancelled``, and observers of
/// ``TokenManager/events()`` get `signedOut`.
extension AuthInterceptor: SessionResettable {
    /// Signs out of the `tokenManager`.
    /// - Throws: ``TokenStoreError`` when the store cannot be cleared.
    public func resetSession() async throws {
        try await tokenManager.signOut()
    }

    /// ``SessionResetStage/signOut``: first, so no request started during the reset still
    /// carries the old token.
    public var sessionResetStage: SessionResetStage { .signOut }

    /// The token manager and its store's storage (``TokenStore/storageIdentity``).
    public var sessionStateIdentities: [SessionStateIdentity] {
        var identities = [SessionStateIdentity("tokens", object: tokenManager, label: "one TokenManager")]
        if let store = tokenManager.store.storageIdentity { identities.append(store) }
        return identities
    }
}
