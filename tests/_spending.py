"""What worker processes run in the spending tests: module-level functions, importable by
name in spawned and loky workers (``tests/`` is on the path). Light on purpose: a spawned
worker imports this module and privkit only."""

from privkit import BudgetExceededError


def spend_or_refuse(shared, block):
    """One spend: True if accepted, False if refused."""
    try:
        shared.spend(block)
    except BudgetExceededError:
        return False
    return True


def spend_until_refused(shared, block, times):
    """Up to ``times`` spends; the number accepted."""
    return sum(spend_or_refuse(shared, block) for _ in range(times))


def read(shared):
    """Everything a handle reads, as the worker sees it."""
    return (shared.history, shared.spent, shared.remaining, shared.limit, shared.accountant,
            shared.relation, shared.rho_limit)


def raises(shared, block):
    """The type and message of the exception that spending ``block`` raises, or None."""
    try:
        shared.spend(block)
    except Exception as error:
        return type(error).__name__, str(error)
    return None
