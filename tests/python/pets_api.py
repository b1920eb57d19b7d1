"""The service `tests/tests/import_openapi.rs` imports: a FastAPI
application whose OpenAPI document FastAPI generates (`/openapi.json`).

Every route wants `Authorization: Bearer s3cret-token`, which the
importing application supplies; `/calls` counts the requests that reached
a route, so a test can see that a refused call sent nothing."""

import asyncio
from typing import Optional

from fastapi import Cookie, FastAPI, Header, HTTPException, Query
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

app = FastAPI(title="Pets")

PETS: dict[int, "Pet"] = {}
CALLS = {"count": 0}


def check(authorization: Optional[str]) -> None:
    CALLS["count"] += 1
    if authorization != "Bearer s3cret-token":
        raise HTTPException(status_code=401, detail="who are you?")


class PetIn(BaseModel):
    name: str = Field(description="The pet's name.")
    kind: str = "cat"
    age: Optional[int] = None


class Pet(PetIn):
    id: int


@app.get("/pets", operation_id="listPets", summary="List pets")
def list_pets(
    kind: Optional[str] = None,
    limit: int = Query(10, ge=1, le=100),
    authorization: Optional[str] = Header(None),
) -> list[Pet]:
    """Every pet, or those of one kind."""
    check(authorization)
    return [p for p in PETS.values() if kind is None or p.kind == kind][:limit]


@app.post("/pets", operation_id="createPet", status_code=201)
def create_pet(pet: PetIn, authorization: Optional[str] = Header(None)) -> Pet:
    """Adds a pet."""
    check(authorization)
    new = Pet(id=len(PETS) + 1, **pet.model_dump())
    PETS[new.id] = new
    return new


@app.get("/pets/{pet_id}")
def get_pet(pet_id: int, authorization: Optional[str] = Header(None)) -> Pet:
    check(authorization)
    if pet_id not in PETS:
        raise HTTPException(status_code=404, detail="no such pet")
    return PETS[pet_id]


@app.delete("/pets/{pet_id}", operation_id="deletePet", status_code=204)
def delete_pet(pet_id: int, authorization: Optional[str] = Header(None)) -> None:
    check(authorization)
    PETS.pop(pet_id, None)


@app.get("/names/{name}/greeting", operation_id="greet", response_class=PlainTextResponse)
def greet(name: str, authorization: Optional[str] = Header(None)) -> str:
    check(authorization)
    return f"Hello, {name}!"


@app.get("/big", operation_id="big", response_class=PlainTextResponse)
def big(authorization: Optional[str] = Header(None)) -> str:
    check(authorization)
    return "x" * 3_000_000


@app.get("/headers", operation_id="headers")
def headers(
    x_request_tag: str = Header(),
    x_api_key: Optional[str] = Header(None),
    authorization: Optional[str] = Header(None),
) -> dict:
    """The request's tag, which the caller sends, and its API key, which
    the importing application adds."""
    check(authorization)
    return {"tag": x_request_tag, "api_key": x_api_key}


@app.get("/slow", operation_id="slow")
async def slow(authorization: Optional[str] = Header(None)) -> dict:
    check(authorization)
    await asyncio.sleep(10)
    return {}


@app.get("/fail", operation_id="fail", response_class=PlainTextResponse)
def fail(authorization: Optional[str] = Header(None)) -> PlainTextResponse:
    """A failure that says far too much, in two-byte characters."""
    check(authorization)
    return PlainTextResponse("é" * 3000, status_code=500)


@app.get("/me", operation_id="whoAmI")
def who_am_i(session: Optional[str] = Cookie(None)) -> dict:
    return {"session": session}


@app.get("/calls", operation_id="calls")
def calls() -> dict:
    return CALLS
