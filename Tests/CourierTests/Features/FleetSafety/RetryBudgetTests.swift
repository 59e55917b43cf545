import Testing
import Courier

/// The retry budget's arithmetic: a share of recent first attempts plus a floor, expiring.
@Suite struct RetryBudgetTests {
    @Test func aLoneCallKeepsTheFloorsRetries() {
        var ledger = RetryBudgetLedger(budget: RetryBudget())  // 0.2 × 1 + 0.2/s × 10 s = 2.2
        ledger.deposit(at: .zero)
        do {
            let value = ledger.withdraw(at: .zero)
            #expect(value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(1))
            #expect(value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(2))
            #expect(!value)
        }
    }

    @Test func retriesAreAShareOfFirstAttempts() {
        var ledger = RetryBudgetLedger(budget: RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 0))
        for _ in 0..<100 { ledger.deposit(at: .seconds(1)) }
        var granted = 0
        for _ in 0..<100 where ledger.withdraw(at: .seconds(2)) { granted += 1 }
        #expect(granted == 20)
    }

    @Test func depositsAndWithdrawalsExpireAfterTheWindow() {
        var ledger = RetryBudgetLedger(
            budget: RetryBudget(retryRatio: 0.5, minimumRetriesPerSecond: 0, window: .seconds(10)))
        for _ in 0..<4 { ledger.deposit(at: .zero) }
        do {
            let value = ledger.withdraw(at: .seconds(1))
            #expect(value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(1))
            #expect(value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(9))
            #expect(!value)  // 0.5 × 4 − 2 = 0
        }
        #expect(ledger.balance(at: .seconds(12)) == 0)  // the deposits expired, so did the withdrawals
        ledger.deposit(at: .seconds(12))
        ledger.deposit(at: .seconds(12))
        do {
            let value = ledger.withdraw(at: .seconds(13))
            #expect(value)  // refilled by new first attempts
        }
        do {
            let value = ledger.withdraw(at: .seconds(13))
            #expect(!value)
        }
    }

    @Test func theFloorRefillsWithTime() {
        var ledger = RetryBudgetLedger(budget: RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0.1))
        do {
            let value = ledger.withdraw(at: .zero)
            #expect(value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(5))
            #expect(!value)
        }
        do {
            let value = ledger.withdraw(at: .seconds(10))
            #expect(value)  // the first withdrawal expired
        }
    }

    @Test func badValuesAreClamped() {
        let budget = RetryBudget(retryRatio: 7, minimumRetriesPerSecond: -.infinity, window: .seconds(-1))
        #expect(budget.retryRatio == 1)
        #expect(budget.minimumRetriesPerSecond == 0)
        #expect(budget.window == .milliseconds(1))
    }
}
