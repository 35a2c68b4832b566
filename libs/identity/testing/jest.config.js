module.exports = {
  displayName: 'identity-testing',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
