import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's `taskIsWaitingForConnectivity` (Apple) becomes the call's connectivity-wait events,
/// its `connectivityWaits` and the monitor's waiting state; the mapping runs here on Linux through
/// the delegate's platform-neutral method the Apple adapter forwards to.
@Suite("A task waiting for connectivity reaches the call where URLSession reports it (mapping runs on Linux)")
struct ConnectivityWaitCapabilityTests {
    final class Events: NetworkEventMonitor {
        let kinds = Locked<[String]>([])
        func receive(_ event: NetworkEvent) {
            switch event.kind {
            case .waitingForConnectivity: kinds.withLock { $0.append("waiting") }
            case .connectivityWaitEnded(let returned, _): kinds.withLock { $0.append("ended returned=\(returned)") }
            default: break
            }
        }
    }

    final class Monitor: ConnectivityWaiting {
        let calls = Locked<[Bool]>([])
        func waitForConnectivity() async {}
        func callIsWaiting(_ waiting: Bool) { calls.withLock { $0.append(waiting) } }
    }

    struct Fixture {
        let delegate: TransportSessionDelegate
        let context = RequestContext()
        let events = Events()
        let monitor = Monitor()

        init(reports: Bool, id: Int) {
            let capabilities = TransportFixtures.capabilities(.foundationNetworking) {
                $0.reportsWaitingForConnectivity = reports
            }
            delegate = TransportSessionDelegate(capabilities: capabilities, serverTrust: NoServerTrustEvaluator())
            context.eventMonitors = [events]
            context[ConnectivityMonitorKey.self] = monitor
            let reporting = TransportReporter(
                progress: nil, timings: nil, connectivity: ConnectivityWaitReporter(context: context))
            TransportReporter.$bound.withValue(reporting) { [delegate] in delegate.register(id, pinning: nil) }
        }
    }

    @Test("a wait that ends with the response head: one waiting event, one ended event, the monitor told both")
    func waitEndsWithResponse() {
        let fixture = Fixture(reports: true, id: 3)
        fixture.delegate.taskIsWaitingForConnectivity(3)
        fixture.delegate.taskIsWaitingForConnectivity(3)  // URLSession may repeat itself: one wait
        fixture.delegate.connectivityReturned(3)
        fixture.delegate.connectivityReturned(3)  // later body bytes: no second end
        fixture.delegate.complete(3, error: nil, response: nil)
        #expect(fixture.events.kinds.current == ["waiting", "ended returned=true"])
        #expect(fixture.monitor.calls.current == [true, false])
        #expect(fixture.context.connectivityWaits.map(\.networkReturned) == [true])
        #expect(fixture.context.connectivityWaits.allSatisfy { $0.duration >= .zero })
        #expect(fixture.delegate.taskOptions.current.isEmpty)
    }

    @Test("a task that fails while it waits (deadline, cancellation) ends the wait with the network not back")
    func waitEndsWithFailure() {
        let fixture = Fixture(reports: true, id: 4)
        fixture.delegate.taskIsWaitingForConnectivity(4)
        fixture.delegate.complete(4, error: URLError(.timedOut), response: nil)
        #expect(fixture.events.kinds.current == ["waiting", "ended returned=false"])
        #expect(fixture.monitor.calls.current == [true, false])
        #expect(fixture.context.connectivityWaits.map(\.networkReturned) == [false])
    }

    @Test("a task that never waited reports nothing")
    func noWaitNoEvents() {
        let fixture = Fixture(reports: true, id: 5)
        fixture.delegate.connectivityReturned(5)
        fixture.delegate.complete(5, error: nil, response: nil)
        #expect(fixture.events.kinds.current.isEmpty)
        #expect(fixture.monitor.calls.current.isEmpty)
        #expect(fixture.context.connectivityWaits.isEmpty)
    }

    @Test("where URLSession reports no waits (Linux) nothing is registered for them")
    func linuxRegistersNothing() {
        let fixture = Fixture(reports: false, id: 6)
        #expect(fixture.delegate.taskOptions.current.isEmpty)
        fixture.delegate.taskIsWaitingForConnectivity(6)
        #expect(fixture.events.kinds.current.isEmpty)
    }
}
