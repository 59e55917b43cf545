/// The account a call must go out under, for Courier's modules that send on behalf of an account
/// long after the call was made (the offline queue's mutations). Carried in the call's
/// ``RequestContext`` (`APIClient.response(for:requiredEnvironment:requiredSignIn:)`); the
/// ``AuthInterceptor`` attaches a token only when it belongs to that account, else the call ends
/// with ``SignInMismatch`` and nothing is sent.
///
/// The auth step reads the ``TokenManager``'s sign-in number, then asks ``isCurrentAccount``, then
/// takes the token (refreshed if need be), and refuses it when its sign-in number is not the one it
/// read first. A token of the account is therefore attached only if the app keeps its account
/// value and its sign-in in step: the account it reports is the signed-in user's or none — set
/// to `nil` before another user's tokens are signed in, and to the new user once they are.
package struct SignInRequirement: Sendable {
    /// Whether the account the call belongs to is the app's current one (read once per attempt).
    package var isCurrentAccount: @Sendable () -> Bool

    /// Creates a requirement that holds while `isCurrentAccount` returns `true`.
    package init(isCurrentAccount: @escaping @Sendable () -> Bool) {
        self.isCurrentAccount = isCurrentAccount
    }
}

/// The context slot holding a call's ``SignInRequirement``.
package enum SignInRequirementKey: RequestContextKey {
    package typealias Value = SignInRequirement
}

/// The context slot set by the ``AuthInterceptor`` when it refused a token of another sign-in
/// than the call's ``SignInRequirement``.
package enum SignInMismatchKey: RequestContextKey {
    package typealias Value = Bool
}

/// A call that had to go out under one account found another sign-in (or none) when its token was
/// to be attached, and was not sent (see ``SignInRequirement``). Thrown for Courier's own modules
/// only: the offline queue keeps the mutation for its account instead of sending it with the
/// next user's token.
package struct SignInMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    package init() {}

    package var description: String { "made under another sign-in than the one current now: not sent" }
}
