/// What the queue does with a pending mutation made in another environment or account than the
/// one its client is in now (``MutationOrigin``). In both cases it is never sent elsewhere.
public enum ForeignMutationPolicy: Sendable, Hashable {
    /// Keep it: it is delivered once the client points at its environment with its account
    /// current again (switch back and ``MutationQueue/flush()``). The first flush that finds it
    /// reports ``MutationEvent/Outcome/held(_:)``. The default.
    case hold
    /// Delete it at the next flush, reporting ``MutationEvent/Outcome/discarded(_:)`` with the
    /// mutation's id (the app may re-create it for the new environment).
    case discard
}
