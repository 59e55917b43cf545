/// Logout through ``APIClient/resetSession(also:)`` signs the user out: the token store is
/// cleared, waiting requests end with ``NetworkError/cancelled``, and observers of
/// ``TokenManager/events()`` get `signedOut`.
extension AuthInterceptor: SessionResettable {
    /// Signs out of the `tokenManager`.
    /// - Throws: ``TokenStoreError`` when the store cannot be cleared.
    public func resetSession() async throws {
        try await tokenManager.signOut()
    }
}
