"""Protocol handlers, one module per API family; importing registers them."""
