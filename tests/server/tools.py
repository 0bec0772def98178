"""Tool definitions the server tests send, as pydantic models (strict tools for the SDKs' parse helpers)."""

from __future__ import annotations

from pydantic import BaseModel


class TripOptions(BaseModel):
    hotel: str
    rooms: int
    note: str


class PlanTrip(BaseModel):
    """Plan a trip."""

    city: str
    days: int
    budget: float
    refundable: bool
    stops: list[str]
    options: TripOptions


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str


class Wind(BaseModel):
    speed: int
    unit: str


class Forecast(BaseModel):
    """A structured answer, for the SDKs' parse helpers."""

    city: str
    temperature: float
    days: int
    sunny: bool
    tags: list[str]
    wind: Wind
