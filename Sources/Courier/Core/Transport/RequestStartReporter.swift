/// How a transport tells the call that its request really left for the network: the start part of
/// ``TransportReporter``, which transports use, so ``RequestOptions/onStart`` means the same on
/// every transport.
package struct RequestStartReporter: Sendable {
    private let context: RequestContext

    /// Reports into `context`.
    package init(context: RequestContext) { self.context = context }

    /// The reporter of the call the current task is sending, or `nil` when the call does not wait
    /// for its start (no `onStart` hook, or it already ran).
    package static var current: RequestStartReporter? { TransportReporter.bound?.start }

    /// Tells the call its request left for the network. Runs the call's `onStart` hook the first
    /// time (later reports — another attempt, a redirect hop — do nothing). Safe from any thread;
    /// the hook runs on the caller of this method, so call it where no lock of yours is held.
    package func reportStart() {
        context.fireStartHook()
    }
}
