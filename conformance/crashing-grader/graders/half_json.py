"""A grader that exits 0 having printed half a JSON object."""

print('{"score": 0.9')
