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
    /// The ``TokenManager`` sign-in the call must go out under, when the caller knows it (the
    /// sign-in an earlier request of the same transfer went out under, ``SignInSessionKey``):
    /// another sign-in since, even of the same account, refuses the call.
    package var session: Int?

    /// Creates a requirement that holds while `isCurrentAccount` returns `true` and, with
    /// `session`, while that sign-in is the token manager's current one.
    package init(session: Int? = nil, isCurrentAccount: @escaping @Sendable () -> Bool = { true }) {
        self.isCurrentAccount = isCurrentAccount
        self.session = session
    }
}

/// The context slot the ``AuthInterceptor`` fills with the ``TokenManager`` sign-in of the token it
/// attached, so that the later requests of one transfer (a feed's reconnections) can require it
/// (``SignInRequirement/session``).
package enum SignInSessionKey: RequestContextKey {
    package typealias Value = Int
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
