"""A small ledger environment used to exercise the contract in tests."""

from __future__ import annotations

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool


class Account(BaseModel):
    owner: str
    balance: int = 0
    tags: list[str] = Field(default_factory=list)


class LedgerState(BaseModel):
    accounts: dict[str, Account] = Field(default_factory=dict)
    next_id: int = 1
    now: str = "2026-01-01T00:00:00"


class Ledger(Environment):
    name = "test/ledger"
    State = LedgerState

    @tool
    def get_balance(self, account_id: str) -> int:
        """Return an account's balance.

        Args:
            account_id: The account to read.
        """
        if account_id not in self.state.accounts:
            raise ToolError(f"account {account_id!r} does not exist")
        return self.state.accounts[account_id].balance

    @tool(write=True)
    def open_account(self, owner: str, deposit: int = 0) -> str:
        """Open an account and return its id.

        Args:
            owner: Name of the account holder.
            deposit: Initial deposit in cents (non-negative).
        """
        if deposit < 0:
            raise ToolError("deposit must be non-negative")
        account_id = f"A{self.state.next_id}"
        self.state.next_id += 1
        self.state.accounts[account_id] = Account(owner=owner, balance=deposit)
        return account_id

    @tool(write=True)
    def transfer(self, source: str, target: str, amount: int) -> dict[str, int]:
        """Move money between two accounts.

        Args:
            source: Account to debit.
            target: Account to credit.
            amount: Amount in cents, positive.
        """
        accounts = self.state.accounts
        if amount <= 0:
            raise ToolError("amount must be positive")
        # Debit first, then validate the target: a failure here must be rolled back.
        accounts[source].balance -= amount
        if accounts[source].balance < 0:
            raise ToolError(f"insufficient funds in {source}")
        accounts[target].balance += amount
        return {source: accounts[source].balance, target: accounts[target].balance}

    @tool(write=True)
    def tag(self, account_id: str, labels: list[str]) -> list[str]:
        """Add labels to an account (fails half-way on an empty label).

        Args:
            account_id: The account to tag.
            labels: Labels to add.
        """
        account = self.state.accounts[account_id]
        for label in labels:
            if not label:
                raise ValueError("empty label")
            account.tags.append(label)
        return account.tags
